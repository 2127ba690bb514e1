import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NetworkPolicy } from "../../../../src/shared/net/guarded-request.ts";
import { Sandbox } from "../../../../src/shared/process/sandbox/index.ts";

/**
 * A change of a workspace as a whole (restore, delete) runs with none of its programs running: those
 * running are ended first, and none may start until the change is done. Checked with the sandbox on
 * (where this machine can confine) and off (programs as plain processes: the same bookkeeping).
 */
describe.each([
  ["on", {}],
  ["off", { AGENTOS_SANDBOX: "off" }],
])("withoutPrograms, sandbox %s", (_mode, env) => {
  let dir: string;
  let sandbox: Sandbox;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "programs-"));
    sandbox = new Sandbox({ env, dataDir: dir, policy: {} as NetworkPolicy });
  });
  afterAll(async () => {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const workspace = (name: string) => {
    const path = join(dir, "workspaces", name);
    mkdirSync(path, { recursive: true });
    return path;
  };
  const sleep = (root: string) =>
    sandbox.start(
      { workspace: root, executable: "/bin/sleep", args: ["30"] },
      { timeoutMs: 60_000, killGraceMs: 0 },
    );

  it("ends the workspace's running programs before the change, refuses new ones during it, and only there", async (context) => {
    const status = await sandbox.ready();
    if (status.mode === "unavailable") context.skip(`the sandbox is unavailable here: ${status.reason}`);
    const root = workspace("a");
    const other = workspace("b");
    const running = await sleep(root);
    const elsewhere = await sleep(other);
    let ended = false;
    void running.done.then(() => {
      ended = true;
    });
    let endedFirst = false;
    const refused = await sandbox.withoutPrograms(root, async () => {
      endedFirst = ended;
      return sleep(root).then(
        () => null,
        (error: { status?: number; message: string }) => error,
      );
    });
    expect(endedFirst).toBe(true);
    expect((await running.done).reason).toBe("cancelled");
    expect(refused).toMatchObject({ status: 409 });
    expect(refused?.message).toContain("restored or removed");
    // Another workspace's program ran on; the workspace takes programs again once the change is done.
    const after = await sleep(root);
    let elsewhereEnded = false;
    void elsewhere.done.then(() => {
      elsewhereEnded = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(elsewhereEnded).toBe(false);
    after.cancel();
    elsewhere.cancel();
    expect((await after.done).reason).toBe("cancelled");
  });
});
