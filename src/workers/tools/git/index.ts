import { relative } from "node:path";
import { z } from "zod";
import { badRequest } from "../../../shared/errors.ts";
import { findExecutable } from "../../../shared/process/supervise.ts";
import { type CommandResult, runProgram, SAFE_PATH } from "../command.ts";
import { agentIdField, pathField } from "../fields.ts";
import { existingInside, resolveInside } from "../sandbox.ts";
import { defineTool, type ToolContext } from "../tool.ts";

const MAX_DIFF_BYTES = 200_000;

/** git with these arguments in the agent's workspace (or a repository below it); fails on a non-zero exit. */
async function git(
  ctx: ToolContext,
  agentId: string,
  args: string[],
  options: { repo?: string; env?: Record<string, string>; allowFailure?: boolean } = {},
) {
  const root = await ctx.workspace(agentId);
  const executable = findExecutable("git", SAFE_PATH);
  if (!executable) throw badRequest("git is not installed on this host");
  const cwd = options.repo ? await existingInside(root, options.repo) : root;
  const result: CommandResult = await runProgram(ctx.sandbox, root, executable, {
    args: ["-C", cwd, ...args],
    env: options.env,
    maxOutputBytes: MAX_DIFF_BYTES,
    timeoutMs: 60_000,
    signal: ctx.call.signal,
  });
  if (result.exitCode !== 0 && !options.allowFailure) {
    const message = result.stderr.trim() || result.stdout.trim() || `exit code ${result.exitCode}`;
    if (/not a git repository/i.test(message)) {
      throw badRequest(
        `${options.repo ?? "Your workspace"} is not a git repository: commit with init: true to create one`,
      );
    }
    throw badRequest(`git ${args[0]} failed: ${message.slice(0, 2000)}`);
  }
  return { root, cwd, ...result };
}

const repoField = pathField("Repository directory").optional();

/** Paths given to git, checked against the workspace and made relative to the repository. */
async function repoPaths(ctx: ToolContext, agentId: string, repo: string | undefined, paths: string[]) {
  const root = await ctx.workspace(agentId);
  const cwd = repo ? await existingInside(root, repo) : root;
  return Promise.all(paths.map(async (path) => relative(cwd, await resolveInside(root, path)) || "."));
}

const gitStatus = defineTool({
  id: "tool::git_status",
  actsFor: "agent",
  description:
    "The git repository of your workspace: {branch, clean, changes: [{status, path}], recent: last 10 commits}.",
  input: z.strictObject({ agentId: agentIdField, repo: repoField }),
  async run({ agentId, repo }, ctx) {
    const status = await git(ctx, agentId, ["status", "--porcelain=v1", "--branch", "-z"], { repo });
    const records = status.stdout.split("\0").filter(Boolean);
    const head = records[0]?.startsWith("## ") ? (records.shift() as string).slice(3) : "";
    const changes = records.map((record) => ({ status: record.slice(0, 2).trim(), path: record.slice(3) }));
    const log = await git(ctx, agentId, ["log", "-10", "--format=%H%x1f%an%x1f%aI%x1f%s"], {
      repo,
      allowFailure: true,
    });
    return {
      branch: head.split("...")[0]?.replace(/^No commits yet on /, "") ?? null,
      clean: changes.length === 0,
      changes,
      recent: commits(log.exitCode === 0 ? log.stdout : ""),
    };
  },
});

const gitDiff = defineTool({
  id: "tool::git_diff",
  actsFor: "agent",
  description:
    "Unified diff of your workspace's repository: unstaged changes, or staged ones with staged: true; paths limits it. {diff, truncated}.",
  input: z.strictObject({
    agentId: agentIdField,
    repo: repoField,
    staged: z.boolean().default(false),
    paths: z.array(pathField()).max(100).default([]),
  }),
  async run({ agentId, repo, staged, paths }, ctx) {
    const checked = await repoPaths(ctx, agentId, repo, paths);
    const args = ["diff", "--no-color", "--no-ext-diff", ...(staged ? ["--cached"] : []), "--", ...checked];
    const result = await git(ctx, agentId, args, { repo });
    return { diff: result.stdout, truncated: result.truncated };
  },
});

const gitCommit = defineTool({
  id: "tool::git_commit",
  actsFor: "agent",
  description:
    "Commit in your workspace's repository: stages files (all changes when omitted) and commits with message, authored by you. init: true creates the repository first if there is none. {commit, summary}.",
  input: z.strictObject({
    agentId: agentIdField,
    repo: repoField,
    message: z.string().trim().min(1, "message is required").max(10_000),
    files: z.array(pathField()).max(1000).optional().describe("Paths to stage; all changes when omitted"),
    init: z.boolean().default(false),
  }),
  risky: true,
  async run({ agentId, repo, message, files, init }, ctx) {
    if (init) {
      const probe = await git(ctx, agentId, ["rev-parse", "--git-dir"], { repo, allowFailure: true });
      if (probe.exitCode !== 0) await git(ctx, agentId, ["init", "-q", "-b", "main"], { repo });
    }
    const author = {
      GIT_AUTHOR_NAME: `agent ${agentId}`,
      GIT_AUTHOR_EMAIL: `${agentId}@agents.agentos.local`,
    };
    const env = {
      ...author,
      GIT_COMMITTER_NAME: author.GIT_AUTHOR_NAME,
      GIT_COMMITTER_EMAIL: author.GIT_AUTHOR_EMAIL,
    };
    const staged = files ? ["add", "--", ...(await repoPaths(ctx, agentId, repo, files))] : ["add", "-A"];
    await git(ctx, agentId, staged, { repo });
    await git(ctx, agentId, ["commit", "-q", "-m", message], { repo, env });
    const { stdout } = await git(ctx, agentId, ["log", "-1", "--format=%H%x1f%an%x1f%aI%x1f%s"], { repo });
    const [commit] = commits(stdout);
    const stat = await git(ctx, agentId, ["show", "--stat", "--format=", "HEAD"], { repo });
    return { commit: commit?.sha, summary: stat.stdout.trim().split("\n").at(-1)?.trim() ?? "" };
  },
});

const gitLog = defineTool({
  id: "tool::git_log",
  actsFor: "agent",
  description:
    "Commits of your workspace's repository, newest first: [{sha, author, date, subject}]; path limits it to one file.",
  input: z.strictObject({
    agentId: agentIdField,
    repo: repoField,
    maxCount: z.number().int().min(1).max(500).default(20),
    path: pathField().optional(),
  }),
  async run({ agentId, repo, maxCount, path }, ctx) {
    const args = ["log", `-${maxCount}`, "--format=%H%x1f%an%x1f%aI%x1f%s"];
    if (path) args.push("--", ...(await repoPaths(ctx, agentId, repo, [path])));
    return { commits: commits((await git(ctx, agentId, args, { repo })).stdout) };
  },
});

function commits(text: string) {
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [sha, author, date, subject] = line.split("\x1f");
      return { sha, author, date, subject };
    });
}

export const gitTools = [gitStatus, gitDiff, gitCommit, gitLog];
