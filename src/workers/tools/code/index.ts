import { createHash } from "node:crypto";
import { z } from "zod";
import { call } from "../../../engine/call.ts";
import { badRequest } from "../../../shared/errors.ts";
import { DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, runCommand, runProgram } from "../command.ts";
import { agentIdField, pathField, timeoutField } from "../fields.ts";
import { existingInside, shown } from "../sandbox.ts";
import { defineTool } from "../tool.ts";
import { readInside, statInside } from "../workspace-fs.ts";
import { analyzeSource, type FileMetrics } from "./analyze.ts";
import { lspTools } from "./lsp.ts";
import { findFormatter, findLinter, TEST_RUNNERS } from "./runners.ts";
import { sourceFiles } from "./sources.ts";

const digest = async (root: string, file: string) =>
  createHash("sha256")
    .update(await readInside(root, file))
    .digest("hex");

/**
 * The largest file code_analyze measures. Measuring is synchronous, on the service's own thread, at tens
 * of milliseconds a megabyte, and the file is held in memory: ten calls at once on a 96 MB file held
 * every other request for 3.5 s and took a gigabyte.
 */
const MAX_ANALYZED_BYTES = 10_000_000;

const codeAnalyze = defineTool({
  id: "tool::code_analyze",
  actsFor: "agent",
  description:
    "Measure source code (a file, or every source file under a directory): lines, code, comments, blank, functions and cyclomatic complexity per file, with totals.",
  input: z.strictObject({ agentId: agentIdField, path: pathField("File or directory").default(".") }),
  async run({ agentId, path }, ctx) {
    const root = await ctx.workspace(agentId);
    const target = await existingInside(root, path);
    const inDirectory = (await statInside(root, target)).isDirectory();
    const files = inDirectory ? await sourceFiles(target) : [target];
    const perFile: Array<FileMetrics & { path: string }> = [];
    const skipped: string[] = [];
    for (const file of files) {
      // A directory's oversized file is skipped and named; one asked for by path is refused (400).
      if (inDirectory && (await statInside(root, file)).size > MAX_ANALYZED_BYTES) {
        skipped.push(shown(root, file));
        continue;
      }
      perFile.push({
        path: shown(root, file),
        ...analyzeSource(file, (await readInside(root, file, MAX_ANALYZED_BYTES)).toString("utf8")),
      });
    }
    const totals = { files: perFile.length, lines: 0, code: 0, comments: 0, blank: 0, functions: 0 };
    for (const metrics of perFile)
      for (const key of ["lines", "code", "comments", "blank", "functions"] as const)
        totals[key] += metrics[key];
    return { totals, files: perFile, ...(skipped.length > 0 ? { skipped } : {}) };
  },
});

const codeFormat = defineTool({
  id: "tool::code_format",
  actsFor: "agent",
  description:
    "Format a source file in place with the formatter installed for its kind (biome or prettier for JS/TS/JSON/CSS/Markdown, ruff or black for Python, rustfmt, gofmt, shfmt): {path, formatter, changed}.",
  input: z.strictObject({ agentId: agentIdField, path: pathField() }),
  risky: true,
  async run({ agentId, path }, ctx) {
    const root = await ctx.workspace(agentId);
    const file = await existingInside(root, path);
    const formatter = await findFormatter(root, file);
    const before = await digest(root, file);
    const result = await runProgram(ctx.sandbox, root, formatter.executable, {
      args: formatter.args,
      timeoutMs: 60_000,
      signal: ctx.call.signal,
    });
    if (result.exitCode !== 0) {
      throw badRequest(
        `${formatter.name} failed on ${path}: ${(result.stderr || result.stdout).trim().slice(0, 4000)}`,
      );
    }
    return {
      path: shown(root, file),
      formatter: formatter.name,
      changed: (await digest(root, file)) !== before,
    };
  },
});

const codeLint = defineTool({
  id: "tool::code_lint",
  actsFor: "agent",
  description:
    "Lint a source file with the linter installed for its kind (biome or eslint, ruff or pylint, go vet, shellcheck): {path, linter, clean, problems (parsed JSON when the linter gives it), output}.",
  input: z.strictObject({ agentId: agentIdField, path: pathField() }),
  async run({ agentId, path }, ctx) {
    const root = await ctx.workspace(agentId);
    const file = await existingInside(root, path);
    const linter = await findLinter(root, file);
    const result = await runProgram(ctx.sandbox, root, linter.executable, {
      args: linter.args,
      timeoutMs: 120_000,
      signal: ctx.call.signal,
    });
    let problems: unknown = null;
    try {
      problems = JSON.parse(result.stdout);
    } catch {
      // Not JSON (go vet): the output says it.
    }
    return {
      path: shown(root, file),
      linter: linter.name,
      clean: result.exitCode === 0,
      problems,
      output: (result.stdout + result.stderr).slice(0, 50_000),
    };
  },
});

const codeTest = defineTool({
  id: "tool::code_test",
  actsFor: "agent",
  description: `Run your project's tests in your workspace: command is one of ${TEST_RUNNERS.join(", ")} with args (e.g. npm ["test"], pytest ["-q"]). {passed, exitCode, stdout, stderr, timedOut, durationMs}.`,
  input: z.strictObject({
    agentId: agentIdField,
    command: z.string().min(1).max(64),
    args: z.array(z.string().max(4096)).max(100).default([]),
    timeoutMs: timeoutField(DEFAULT_TIMEOUT_MS * 2, MAX_TIMEOUT_MS),
  }),
  risky: true,
  async run({ agentId, command, args, timeoutMs }, ctx) {
    const root = await ctx.workspace(agentId);
    const result = await runCommand(ctx.sandbox, root, TEST_RUNNERS, {
      command,
      args,
      timeoutMs,
      signal: ctx.call.signal,
      egress: await ctx.egressOf(agentId),
    });
    return { passed: result.exitCode === 0 && !result.timedOut, ...result };
  },
});

const codeExplain = defineTool({
  id: "tool::code_explain",
  actsFor: "agent",
  description:
    "Explain code with your own model (billed to you): a file of your workspace (path, optional line range) or code text, with an optional question. {explanation}.",
  input: z
    .strictObject({
      agentId: agentIdField,
      path: pathField().optional(),
      code: z.string().max(200_000).optional(),
      fromLine: z.number().int().min(1).optional(),
      toLine: z.number().int().min(1).optional(),
      question: z.string().max(4000).default("What does this code do, and is anything wrong with it?"),
    })
    .refine((input) => (input.path === undefined) !== (input.code === undefined), "give either path or code"),
  async run({ agentId, path, code, fromLine, toLine, question }, ctx) {
    let source = code ?? "";
    if (path !== undefined) {
      const root = await ctx.workspace(agentId);
      const lines = (await readInside(root, await existingInside(root, path))).toString("utf8").split("\n");
      source = lines.slice((fromLine ?? 1) - 1, toLine ?? lines.length).join("\n");
    }
    if (source.length > 200_000)
      throw badRequest("the code is longer than 200000 characters: give a line range");
    const answer = await call(ctx.trigger, "agent::complete", {
      agentId,
      withTools: false,
      system: "You explain code precisely and briefly. Name bugs you see.",
      messages: [
        { role: "user", content: `${question}\n\n\`\`\`${path ? ` ${path}` : ""}\n${source}\n\`\`\`` },
      ],
    });
    return { explanation: answer.content };
  },
});

export const codeTools = [codeAnalyze, codeFormat, codeLint, codeTest, codeExplain, ...lspTools];
