import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { workspaceDir } from "../../../src/workers/tools/sandbox.ts";
import { toolsServer } from "./setup.ts";

const env = toolsServer();

describe("file tools in the agent's workspace", () => {
  it("writes, reads and lists files, creating parent directories", async () => {
    await env.agent();
    expect(await env.tool("tool::file_write", { path: "src/a.txt", content: "hello\n" })).toEqual({
      path: "src/a.txt",
      bytes: 6,
    });
    expect(await env.tool("tool::file_read", { path: "src/a.txt" })).toMatchObject({
      content: "hello\n",
      size: 6,
      encoding: "utf8",
      truncated: false,
    });
    await env.tool("tool::file_write", { path: "src/a.txt", content: "more\n", append: true });
    expect(await env.tool("tool::file_read", { path: "src/a.txt", offset: 6, maxBytes: 2 })).toMatchObject({
      content: "mo",
      truncated: true,
    });
    const listed = await env.tool<{ entries: Array<{ path: string; type: string }> }>("tool::file_list", {
      recursive: true,
    });
    expect(listed.entries.map((e) => [e.path, e.type])).toEqual(
      expect.arrayContaining([
        ["src", "directory"],
        ["src/a.txt", "file"],
      ]),
    );
  });

  it("returns bytes that are not UTF-8 as base64", async () => {
    await env.agent();
    await env.tool("tool::file_write", {
      path: "b.bin",
      content: Buffer.from([0xff, 0x00, 0xfe]).toString("base64"),
      encoding: "base64",
    });
    expect(await env.tool("tool::file_read", { path: "b.bin" })).toMatchObject({
      encoding: "base64",
      content: "/wD+",
    });
  });

  it("refuses .., absolute paths elsewhere and links out of the workspace", async () => {
    const { agentId } = await env.agent();
    expect((await env.failure("tool::file_read", { path: "../../etc/passwd" })).message).toContain(
      '".." is not allowed',
    );
    expect((await env.failure("tool::file_read", { path: "/etc/passwd" })).message).toContain(
      "outside your workspace",
    );
    expect((await env.failure("tool::file_write", { path: "x/../../escape", content: "x" })).status).toBe(
      400,
    );
    const root = workspaceDir(env.server.dataDir, agentId);
    mkdirSync(root, { recursive: true });
    symlinkSync("/etc", join(root, "etc-link"));
    symlinkSync("/etc/passwd", join(root, "passwd-link"));
    expect((await env.failure("tool::file_read", { path: "passwd-link" })).message).toContain(
      "outside your workspace",
    );
    expect((await env.failure("tool::file_read", { path: "etc-link/hostname" })).message).toContain(
      "outside your workspace",
    );
    expect(
      (await env.failure("tool::file_write", { path: "etc-link/evil", content: "x" })).message,
    ).toContain("outside your workspace");
    // A link planted to a host path answers the same whether that path exists or not: no existence oracle.
    symlinkSync("/etc/no-such-file-here", join(root, "missing-link"));
    for (const tool of ["tool::file_read", "tool::file_write"]) {
      const [there, missing] = await Promise.all(
        ["passwd-link", "missing-link"].map((path) => env.failure(tool, { path, content: "x" })),
      );
      expect(missing?.message.replace("missing-link", "passwd-link")).toBe(there?.message);
    }
    // An absolute path inside the workspace is the same file as the relative one.
    await env.tool("tool::file_write", { path: "in.txt", content: "ok" });
    expect(await env.tool("tool::file_read", { path: join(root, "in.txt") })).toMatchObject({
      content: "ok",
    });
  });

  it("refuses to read or write through links planted in the workspace that point into the data dir", async () => {
    const { agentId } = await env.agent();
    const dataDir = env.server.dataDir;
    const root = workspaceDir(dataDir, agentId);
    mkdirSync(root, { recursive: true });
    writeFileSync(join(dataDir, "service.secret"), "secret");
    symlinkSync(join(dataDir, "service.secret"), join(root, "secret-link"));
    symlinkSync(join(dataDir, "agentos.db"), join(root, "db-link"));
    symlinkSync(dataDir, join(root, "data-link"));
    for (const path of ["secret-link", "db-link", "data-link/service.secret"]) {
      expect((await env.failure("tool::file_read", { path })).status).toBe(400);
      expect((await env.failure("tool::file_write", { path, content: "pwned" })).status).toBe(400);
      expect((await env.failure("tool::file_write", { path, content: "pwned", append: true })).status).toBe(
        400,
      );
    }
    expect((await env.failure("tool::file_write", { path: "data-link/new", content: "x" })).status).toBe(400);
    expect(readFileSync(join(dataDir, "service.secret"), "utf8")).toBe("secret");
    expect(existsSync(join(dataDir, "new"))).toBe(false);
  });

  it("keeps each agent in its own workspace, and another realm's agent out of reach", async () => {
    const first = await env.agent();
    await env.tool("tool::file_write", { path: "secret.txt", content: "mine" });
    const second = await env.agent();
    expect((await env.failure("tool::file_read", { path: "secret.txt" }, second)).status).toBe(404);
    // Naming the first agent from the second agent's realm is refused by the agents worker.
    const denied = await env.failure(
      "tool::file_read",
      { agentId: first.agentId, path: "secret.txt" },
      second,
    );
    expect([403, 404]).toContain(denied.status);
  });

  it("applies a patch only when every context line matches, and names the line that does not", async () => {
    await env.agent();
    await env.tool("tool::file_write", { path: "f.txt", content: "one\ntwo\nthree\n" });
    const patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n";
    expect(await env.tool("tool::apply_patch", { patch })).toEqual({
      files: [{ path: "f.txt", deleted: false }],
    });
    expect(await env.tool("tool::file_read", { path: "f.txt" })).toMatchObject({
      content: "one\nTWO\nthree\n",
    });
    // The same patch again: its removed line "two" is no longer there.
    const failed = await env.failure("tool::apply_patch", { patch });
    expect(failed.message).toContain('line 2 should be "two", found "TWO"');
    expect(await env.tool("tool::file_read", { path: "f.txt" })).toMatchObject({
      content: "one\nTWO\nthree\n",
    });
    const create = "--- /dev/null\n+++ b/new/g.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n";
    await env.tool("tool::apply_patch", { patch: create });
    expect(await env.tool("tool::file_read", { path: "new/g.txt" })).toMatchObject({ content: "a\nb\n" });
    expect((await env.failure("tool::apply_patch", { patch: "not a patch" })).message).toContain(
      "no file headers",
    );
  });

  it("edits by hash-anchored lines and refuses a line that changed since it was read", async () => {
    await env.agent();
    await env.tool("tool::file_write", { path: "h.txt", content: "alpha\nbeta\ngamma\n" });
    const { lines } = await env.tool<{ lines: string[] }>("tool::hashline_read", { path: "h.txt" });
    expect(lines[1]).toMatch(/^2:[0-9a-f]{6}\|beta$/);
    const hash = (lines[1] as string).split(":")[1]?.split("|")[0];
    const edits = [{ line: 2, hash, op: "replace", content: "BETA" }];
    const preview = await env.tool<{ diff: string }>("tool::hashline_diff", { path: "h.txt", edits });
    expect(preview.diff).toContain("-beta\n+BETA");
    expect(await env.tool("tool::file_read", { path: "h.txt" })).toMatchObject({
      content: "alpha\nbeta\ngamma\n",
    });
    await env.tool("tool::hashline_edit", { path: "h.txt", edits });
    expect(await env.tool("tool::file_read", { path: "h.txt" })).toMatchObject({
      content: "alpha\nBETA\ngamma\n",
    });
    expect((await env.failure("tool::hashline_edit", { path: "h.txt", edits })).message).toContain(
      "changed since it was read",
    );
  });

  it("removes the workspace with the agent", async () => {
    const { agentId } = await env.agent();
    await env.tool("tool::file_write", { path: "x.txt", content: "x" });
    const root = workspaceDir(env.server.dataDir, agentId);
    writeFileSync(join(root, "y.txt"), "y");
    const deleted = await env.server.request(`/api/agents/${agentId}`, { method: "DELETE" });
    expect(deleted.status).toBeLessThan(300);
    expect(existsSync(root)).toBe(false);
  });
});
