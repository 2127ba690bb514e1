import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { workspaceDir } from "../../../src/workers/tools/sandbox.ts";
import { toolsServer } from "./setup.ts";

/*
 * A language server is the agent's own program when the workspace holds a TypeScript 7+: it runs in the
 * sandbox like any other and is held to the workspace's quota as shell_exec's programs are.
 */
const QUOTA_MB = 5;
const env = toolsServer({ AGENTOS_WORKSPACE_QUOTA_MB: String(QUOTA_MB) });

/** Plants `script` as the workspace's own TypeScript 7 tsc (what languageServerFor prefers). */
function plantServer(agentId: string, script: string): string {
  const root = workspaceDir(env.server.dataDir, agentId);
  const dir = join(root, "node_modules", "typescript");
  mkdirSync(join(dir, "bin"), { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "typescript", version: "7.0.0" }));
  writeFileSync(join(dir, "bin", "tsc"), script);
  chmodSync(join(dir, "bin", "tsc"), 0o755);
  return root;
}

describe("language servers under the workspace quota", () => {
  it("stops a server that writes past the quota and fails the call naming the quota", async () => {
    const { agentId } = await env.agent();
    await env.tool("tool::file_write", { path: "a.ts", content: "export const a = 1;\n" });
    // 64 files of 1 MiB (each under the per-file limit), ten a second (the watch measures twice a
    // second), then never answers.
    const root = plantServer(
      agentId,
      "#!/bin/sh\nmkdir -p big\ni=0\nwhile [ $i -lt 64 ]; do head -c 1048576 /dev/urandom > big/$i; i=$((i+1)); sleep 0.1; done\nexec sleep 600\n",
    );
    const started = performance.now();
    const failure = await env.failure("tool::lsp_symbols", { path: "a.ts" });
    expect(failure.message).toContain("over its quota");
    expect(failure.message).toMatch(/^language server stopped: the workspace is over its quota/);
    expect(failure.status).toBe(413);
    // Stopped by the watch (twice a second), not by the request's 20 s timeout.
    expect(performance.now() - started).toBeLessThan(15_000);
    const usedMb = Number.parseInt(execFileSync("du", ["-sm", join(root, "big")], { encoding: "utf8" }), 10);
    expect(usedMb).toBeLessThan(QUOTA_MB + 16);
  });

  it("still answers with a well-behaved server under the quota", async () => {
    await env.agent();
    await env.tool("tool::file_write", {
      path: "src/a.ts",
      content: "export function add(a: number, b: number) {\n  return a + b;\n}\n",
    });
    const { symbols } = await env.tool<{ symbols: Array<{ name: string }> }>("tool::lsp_symbols", {
      path: "src/a.ts",
    });
    expect(symbols).toContainEqual(expect.objectContaining({ name: "add" }));
  });
});
