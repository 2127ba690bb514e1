import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runsAsRoot, workspaceOwner } from "../../../../src/shared/process/sandbox/owner.ts";

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
