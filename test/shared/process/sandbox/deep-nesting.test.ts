import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sandbox, type SandboxStatus } from "../../../../src/shared/process/sandbox/index.ts";
import { diskUsage, TOO_DEEP_BYTES } from "../../../../src/shared/process/sandbox/quota.ts";
import { DEFAULT_ALLOWLIST, runCommand } from "../../../../src/workers/tools/command.ts";

/*
 * A program nests directories (by relative paths, which have no length limit) until their path from the
 * host's root is longer than any the service can open (PATH_MAX, 4096 bytes): what it keeps there was
 * in no walk of its workspace, so 120 MiB stayed under a 16 MiB quota, run after run, until the disk's
 * reserve stopped every tenant's programs.
 */
const NEST = (files: number) => `
import os
for _ in range(20):
    os.mkdir("d" * 250)
    os.chdir("d" * 250)
for i in range(${files}):
    with open(f"big{i}", "wb") as f:
        for _ in range(10): f.write(b"x" * (1 << 20))
print("wrote", ${files} * 10, "MiB", flush=True)
import time; time.sleep(3)
print("never stopped", flush=True)
`;

let dir: string;
let sandbox: Sandbox;
let status: SandboxStatus;
beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "deep-nesting-")));
  sandbox = new Sandbox({
    env: { AGENTOS_WORKSPACE_QUOTA_MB: "16", AGENTOS_SANDBOX_DISK_RESERVE_MB: "0" },
    dataDir: dir,
    policy: { allowPrivateNetwork: false, resolve: async () => [] },
  });
  status = await sandbox.ready();
});
afterAll(async () => {
  await sandbox.close();
  // Node's rm cannot remove what is nested this deep; coreutils' can (it walks by descriptor).
  spawnSync("rm", ["-rf", "--", dir]);
});

function workspace(name: string): string {
  const root = join(dir, "workspaces", name);
  mkdirSync(root, { recursive: true });
  return realpathSync(root);
}

describe("directories nested past what the service can open", () => {
  it("count as past any quota when the workspace is measured", async () => {
    const root = workspace("measured");
    spawnSync("python3", ["-c", NEST(0)], { cwd: root });
    expect(await diskUsage(root)).toBeGreaterThanOrEqual(TOO_DEEP_BYTES);
  });

  it("stop the run that makes them, naming why, and a later run may delete them and write again", async (context) => {
    if (status.mode !== "on") context.skip(`the sandbox is not on here: ${JSON.stringify(status)}`);
    const root = workspace("run");
    const run = (code: string) =>
      runCommand(sandbox, root, DEFAULT_ALLOWLIST, {
        command: "python3",
        args: ["-c", code],
        timeoutMs: 30_000,
      });
    const nested = await run(NEST(12));
    expect(nested.stdout, JSON.stringify(nested)).not.toContain("never stopped");
    expect(nested.stderr).toContain("nested too deep to measure");
    // Over the quota: nothing can be written until they are gone, but they can be removed.
    const blocked = await run("f = open('blocked.txt', 'w'); f.write('x' * 1000); f.close()");
    expect(blocked.exitCode).not.toBe(0);
    const removed = await run(
      "import shutil; shutil.rmtree('d' * 250); open('after.txt', 'w').write('x' * 1000)",
    );
    expect(removed.exitCode, JSON.stringify(removed)).toBe(0);
  });
});
