import { closeSync, mkdirSync, mkdtempSync, openSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";

/*
 * A program fills one directory of its workspace with empty files: each costs only ENTRY_BYTES of its
 * quota, so the default quota holds half a million. The service's walks of it (the quota's, every half
 * second while any program of the workspace runs; file_list's) made one lstat call per name all at once:
 * gigabytes of memory and an event loop stalled for tens of seconds, for every realm. lstat is counted
 * here: how many calls, and how many at once.
 */
const calls = { total: 0, inFlight: 0, most: 0 };
/** The modules under test, imported afresh with lstat counted (other test files share this process). */
let modules: {
  LSTAT_BATCH: number;
  diskUsage: typeof import("../../../src/shared/process/sandbox/quota.ts").diskUsage;
  ENTRY_BYTES: number;
  listInside: typeof import("../../../src/workers/tools/workspace-fs.ts").listInside;
};
beforeAll(async () => {
  vi.resetModules();
  vi.doMock("node:fs/promises", async (importOriginal) => {
    const actual = await importOriginal<typeof import("node:fs/promises")>();
    const lstat = async (...args: Parameters<typeof actual.lstat>) => {
      calls.total++;
      calls.most = Math.max(calls.most, ++calls.inFlight);
      try {
        return await actual.lstat(...args);
      } finally {
        calls.inFlight--;
      }
    };
    return { ...actual, lstat, default: { ...actual, lstat } };
  });
  const [dir, quota, fs] = await Promise.all([
    import("../../../src/shared/fs/contained-dir.ts"),
    import("../../../src/shared/process/sandbox/quota.ts"),
    import("../../../src/workers/tools/workspace-fs.ts"),
  ]);
  modules = { ...dir, ...quota, ...fs };
});
afterAll(() => {
  vi.doUnmock("node:fs/promises");
  vi.resetModules();
});

const FILES = 2000;
let root: string;
beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "large-dir-")));
  mkdirSync(join(root, "many"));
  for (let index = 0; index < FILES; index++) closeSync(openSync(join(root, "many", `f${index}`), "w"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));
beforeEach(() => {
  Object.assign(calls, { total: 0, inFlight: 0, most: 0 });
});

describe("a directory of thousands of empty files", () => {
  it("is measured for the quota a batch of lstat calls at a time", async () => {
    // Every file at least an entry's worth; the directory holding them takes blocks of its own.
    expect(await modules.diskUsage(root)).toBeGreaterThanOrEqual((FILES + 1) * modules.ENTRY_BYTES);
    expect(calls.total).toBe(FILES + 1);
    expect(calls.most).toBeLessThanOrEqual(modules.LSTAT_BATCH);
  });

  it("is listed by file_list's walk with only as many lstat calls as entries it can show", async () => {
    const listed = await modules.listInside(root, join(root, "many"), 11);
    expect(listed).toHaveLength(11);
    expect(calls.total).toBe(11);
  });

  it("is listed whole, a batch at a time, when no limit is given", async () => {
    const listed = await modules.listInside(root, join(root, "many"));
    expect(listed).toHaveLength(FILES);
    expect(calls.most).toBeLessThanOrEqual(modules.LSTAT_BATCH);
  });
});
