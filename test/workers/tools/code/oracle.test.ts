import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolsServer } from "../setup.ts";

/*
 * A sandboxed program links node_modules to a host path: code_format looked for the workspace's own
 * formatter through that link (access), so its answer told whether the host path held one.
 */
const env = toolsServer();

let host: string;
beforeAll(() => {
  host = realpathSync(mkdtempSync(join(tmpdir(), "oracle-host-")));
  for (const name of ["biome", "prettier"]) {
    mkdirSync(join(host, ".bin"), { recursive: true });
    writeFileSync(join(host, ".bin", name), "#!/bin/sh\n");
    chmodSync(join(host, ".bin", name), 0o755);
  }
});
afterAll(() => rmSync(host, { recursive: true, force: true }));

async function formatThrough(target: string) {
  await env.agent();
  await env.tool("tool::file_write", { path: "a.js", content: "let a=1\n" });
  const planted = await env.tool<{ exitCode: number; stderr: string }>("tool::shell_exec", {
    command: "python3",
    args: ["-c", `import os; os.symlink(${JSON.stringify(target)}, "node_modules")`],
  });
  expect(planted.exitCode, planted.stderr).toBe(0);
  return env.tool("tool::code_format", { path: "a.js" }).then(
    (answer) => ({ answer }),
    (error: { message: string; status?: number }) => ({ status: error.status, message: error.message }),
  );
}

describe("a link planted in the workspace", () => {
  it("does not tell code_format's caller whether a host path exists", async () => {
    const existing = await formatThrough(host);
    const missing = await formatThrough(join(host, "missing"));
    expect(existing).toEqual(missing);
  });
});
