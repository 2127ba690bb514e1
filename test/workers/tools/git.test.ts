import { describe, expect, it } from "vitest";
import { toolsServer } from "./setup.ts";

const env = toolsServer();

describe("git tools in the agent's workspace", () => {
  it("commits, shows status, diff and log", async () => {
    const { agentId } = await env.agent();
    expect((await env.failure("tool::git_status", {})).message).toContain("not a git repository");
    await env.tool("tool::file_write", { path: "a.txt", content: "one\n" });
    const first = await env.tool<{ commit: string }>("tool::git_commit", { message: "first", init: true });
    expect(first.commit).toMatch(/^[0-9a-f]{40}$/);
    await env.tool("tool::file_write", { path: "a.txt", content: "two\n" });
    const status = await env.tool("tool::git_status", {});
    expect(status).toMatchObject({ branch: "main", clean: false, changes: [{ status: "M", path: "a.txt" }] });
    const { diff } = await env.tool<{ diff: string }>("tool::git_diff", {});
    expect(diff).toContain("-one\n+two");
    await env.tool("tool::git_commit", { message: "second", files: ["a.txt"] });
    const { commits } = await env.tool<{ commits: Array<{ subject: string; author: string }> }>(
      "tool::git_log",
      {},
    );
    expect(commits.map((c) => c.subject)).toEqual(["second", "first"]);
    expect(commits[0]?.author).toBe(`agent ${agentId}`);
    expect((await env.failure("tool::git_diff", { paths: ["../x"] })).message).toContain('".."');
  });

  it("never finds a repository above the workspace", async () => {
    // The test's data dir may sit inside a repository; the workspace must not be taken for part of it.
    await env.agent();
    expect((await env.failure("tool::git_log", {})).message).toContain("not a git repository");
  });
});
