import { mkdirSync, mkdtempSync, realpathSync, rmSync, statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sandbox } from "../../../../src/shared/process/sandbox/index.ts";
import { DEFAULT_ALLOWLIST, runCommand } from "../../../../src/workers/tools/command.ts";

const MiB = 1024 * 1024;

/*
 * A program's files that it deleted but keeps open take disk space no walk of its workspace finds (where
 * runs have a control group, the quota counts them from the run's descriptors: run-groups.test.ts). The
 * program below holds 512 MiB that way, under a larger quota; what stops it is the free space the disk
 * must keep (AGENTOS_SANDBOX_DISK_RESERVE_MB), set here just below what the disk has free, so a few dozen
 * MiB cross it.
 */
const HOLD = `
import os, json, time
written = 0
held = []
chunk = b"x" * (1 << 20)
for i in range(64):
    f = open(f"held-{i}", "wb")
    os.unlink(f"held-{i}")
    for _ in range(8):
        f.write(chunk)
        f.flush()
        os.fsync(f.fileno())
    written += 8
    held.append(f)
# Holding them: on a fast disk the writes end before the first look, which must still stop it.
time.sleep(10)
print(json.dumps({"written": written}))
`;

let dir: string;
let sandbox: Sandbox;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "disk-reserve-"));
  const disk = statfsSync(dir);
  const freeMiB = Math.floor((disk.bavail * disk.bsize) / MiB);
  sandbox = new Sandbox({
    // A quota larger than what it writes: with a control group per run, the deleted files it holds would
    // count against a small one and stop it first (run-groups.test.ts); here the disk's reserve is tried.
    env: { AGENTOS_WORKSPACE_QUOTA_MB: "4096", AGENTOS_SANDBOX_DISK_RESERVE_MB: String(freeMiB - 96) },
    dataDir: dir,
    policy: { allowPrivateNetwork: false, resolve: async () => [] },
  });
});
afterAll(async () => {
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the disk's reserve", () => {
  it("stops a program holding deleted files past it, which no walk of the workspace finds", async (context) => {
    const status = await sandbox.ready();
    if (status.mode !== "on") context.skip(`the sandbox is not on here: ${JSON.stringify(status)}`);
    const root = join(dir, "workspaces", "tenant");
    mkdirSync(root, { recursive: true });
    const ran = await runCommand(sandbox, realpathSync(root), DEFAULT_ALLOWLIST, {
      command: "python3",
      args: ["-c", HOLD],
      timeoutMs: 25_000,
    });
    expect(ran.stdout, JSON.stringify(ran)).not.toContain('"written": 512');
    expect(ran.exitCode).not.toBe(0);
    expect(ran.stderr).toContain("free space");
    expect(ran.timedOut).toBe(false);
  });
});
