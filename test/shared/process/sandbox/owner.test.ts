import { createHash } from "node:crypto";
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { NetworkPolicy } from "../../../../src/shared/net/guarded-request.ts";
import { Sandbox } from "../../../../src/shared/process/sandbox/index.ts";
import { forgetOwners, runsAsRoot, workspaceOwner } from "../../../../src/shared/process/sandbox/owner.ts";

const UID_LOW = 0x70000000;
const UID_HIGH = 0x71000000;

/** A workspace directory name as the tools worker makes them (an agent id, or id-<hash>). */
const name = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/);

afterEach(() => {
  vi.restoreAllMocks();
});

describe("workspaceOwner in a root service", () => {
  it("gives a stable uid in [0x70000000, 0x71000000), its gid the same", (context) => {
    if (!runsAsRoot()) context.skip("the service is not root here: workspaceOwner answers null");
    fc.assert(
      fc.property(name, (dir) => {
        const owner = workspaceOwner(`/data/workspaces/${dir}`);
        expect(owner).not.toBeNull();
        const { uid, gid } = owner as { uid: number; gid: number };
        expect(Number.isInteger(uid)).toBe(true);
        expect(uid).toBeGreaterThanOrEqual(UID_LOW);
        expect(uid).toBeLessThan(UID_HIGH);
        expect(gid).toBe(uid);
        expect(workspaceOwner(`/data/workspaces/${dir}`)).toEqual(owner);
      }),
    );
  });

  it("derives the uid from the name alone, the same across versions (getuid mocked to root)", () => {
    vi.spyOn(process, "getuid").mockReturnValue(0);
    expect(runsAsRoot()).toBe(true);
    // Pinned (sha256("agent-1") starts 6ff3b3bd): a uid must survive upgrades, or workspaces change owner.
    expect(workspaceOwner("/data/workspaces/agent-1")).toEqual({ uid: 0x70f3b3bd, gid: 0x70f3b3bd });
    fc.assert(
      fc.property(name, (dir) => {
        const uid = workspaceOwner(`/w/${dir}`)?.uid ?? -1;
        expect(uid).toBeGreaterThanOrEqual(UID_LOW);
        expect(uid).toBeLessThan(UID_HIGH);
      }),
    );
  });

  it("gives different names different uids (almost always)", () => {
    vi.spyOn(process, "getuid").mockReturnValue(0);
    fc.assert(
      fc.property(name, name, (a, b) => {
        fc.pre(a !== b);
        expect(workspaceOwner(`/w/${a}`)?.uid).not.toBe(workspaceOwner(`/w/${b}`)?.uid);
      }),
      { numRuns: 500 },
    );
    const uids = new Set(
      Array.from({ length: 1000 }, (_, index) => workspaceOwner(`/w/agent-${index}`)?.uid),
    );
    // 1000 names in 2^24 slots: a collision has a chance of about 3%; more than two would be a broken hash.
    expect(uids.size).toBeGreaterThanOrEqual(998);
  });

  it("gives the same name the same uid, wherever the workspace sits", () => {
    vi.spyOn(process, "getuid").mockReturnValue(0);
    fc.assert(
      fc.property(name, name, (dir, parent) => {
        expect(workspaceOwner(`/data/${parent}/${dir}`)).toEqual(workspaceOwner(`/data/workspaces/${dir}`));
      }),
    );
  });
});

describe("workspaceOwner in a non-root service", () => {
  it("is null: the programs run as the service's own uid", () => {
    vi.spyOn(process, "getuid").mockReturnValue(1000);
    expect(runsAsRoot()).toBe(false);
    expect(workspaceOwner("/data/workspaces/agent-1")).toBeNull();
  });
});

/** Two workspace names whose hashed uids are the same (about 5 000 names are tried). */
function collidingNames(): [string, string] {
  const seen = new Map<number, string>();
  for (let index = 0; ; index++) {
    const name = `agent-${index}`;
    const slot = createHash("sha256").update(name).digest().readUInt32BE(0) % (UID_HIGH - UID_LOW);
    const earlier = seen.get(slot);
    if (earlier) return [earlier, name];
    seen.set(slot, name);
  }
}

describe("claimed workspace uids", () => {
  it("gives two names that hash alike different uids, the first keeping its hashed one, for good", (context) => {
    if (!runsAsRoot()) context.skip("the service is not root here: workspaceOwner answers null");
    const dir = mkdtempSync(join(tmpdir(), "owners-"));
    try {
      mkdirSync(join(dir, "workspaces"));
      const [first, second] = collidingNames();
      const hashed = workspaceOwner(`/nowhere/${first}`);
      expect(workspaceOwner(`/nowhere/${second}`)).toEqual(hashed);
      const a = workspaceOwner(join(dir, "workspaces", first));
      const b = workspaceOwner(join(dir, "workspaces", second));
      expect(a).toEqual(hashed);
      expect(b?.uid).not.toBe(a?.uid);
      expect(b?.uid).toBeGreaterThanOrEqual(UID_LOW);
      expect(b?.uid).toBeLessThan(UID_HIGH);
      // A new process finds the same: the claims are files beside the workspaces.
      forgetOwners();
      expect(workspaceOwner(join(dir, "workspaces", second))).toEqual(b);
      expect(workspaceOwner(join(dir, "workspaces", first))).toEqual(a);
      const claim = join(dir, "workspaces", ".uids", (b?.uid ?? 0).toString(16));
      expect(readFileSync(claim, "utf8")).toBe(second);
    } finally {
      forgetOwners();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("gives a workspace that shared a uid its files back under its own, so its programs can write them", async (context) => {
    if (!runsAsRoot()) context.skip("the service is not root here");
    const dir = mkdtempSync(join(tmpdir(), "owners-"));
    const sandbox = new Sandbox({ env: {}, dataDir: dir, policy: {} as NetworkPolicy });
    try {
      const status = await sandbox.ready();
      if (status.mode !== "on") context.skip(`the sandbox is ${status.mode} here`);
      const [first, second] = collidingNames();
      const shared = workspaceOwner(`/nowhere/${first}`) as { uid: number; gid: number };
      // The second workspace as an older build left it: owned by the uid both names hashed to.
      const root = join(dir, "workspaces", second);
      mkdirSync(join(root, "src"), { recursive: true });
      writeFileSync(join(root, "src", "notes.txt"), "old\n");
      for (const path of [root, join(root, "src"), join(root, "src", "notes.txt")])
        chownSync(path, shared.uid, shared.gid);
      mkdirSync(join(dir, "workspaces", first));
      expect(workspaceOwner(join(dir, "workspaces", first))).toEqual(shared);
      const own = workspaceOwner(root) as { uid: number };
      expect(own.uid).not.toBe(shared.uid);
      const run = await sandbox.start(
        { workspace: root, executable: "/bin/sh", args: ["-c", "echo new >> src/notes.txt && id -u"] },
        { timeoutMs: 30_000 },
      );
      const finished = await run.done;
      expect(finished.exitCode, finished.stderr).toBe(0);
      expect(finished.stdout.trim()).toBe(String(own.uid));
      expect(readFileSync(join(root, "src", "notes.txt"), "utf8")).toBe("old\nnew\n");
      expect(statSync(join(root, "src")).uid).toBe(own.uid);
      expect(existsSync(join(dir, "workspaces", ".uids"))).toBe(true);
    } finally {
      await sandbox.close();
      forgetOwners();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
