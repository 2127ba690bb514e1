import { mkdirSync, mkdtempSync, realpathSync, rmSync, statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sandbox } from "../../../../src/shared/process/sandbox/index.ts";
import { DEFAULT_ALLOWLIST, runCommand } from "../../../../src/workers/tools/command.ts";

const MiB = 1024 * 1024;

/*
 * A program's files that it deleted but keeps open take disk space no walk of its workspace finds: the
 * workspace quota never sees them. The program below holds far more than its quota that way; what
 * stops it is the free space the disk must keep (AGENTOS_SANDBOX_DISK_RESERVE_MB), set here just below
 * what the disk has free, so a few dozen MiB cross it.
 */
const HOLD = `
import os, json
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
print(json.dumps({"written": written}))
`;

let dir: string;
let sandbox: Sandbox;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "disk-reserve-"));
  const disk = statfsSync(dir);
  const freeMiB = Math.floor((disk.bavail * disk.bsize) / MiB);
  sandbox = new Sandbox({
    env: { AGENTOS_WORKSPACE_QUOTA_MB: "16", AGENTOS_SANDBOX_DISK_RESERVE_MB: String(freeMiB - 96) },
    dataDir: dir,
    policy: { allowPrivateNetwork: false, resolve: async () => [] },
  });
});
afterAll(async () => {
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the disk's reserve", () => {
  it("stops a program holding deleted files past it, which the workspace quota cannot see", async (context) => {
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
