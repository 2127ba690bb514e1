import { describe, expect, it } from "vitest";
import type { BridgeRun } from "../../../src/workers/bridge/schema.ts";
import {
  ALL_RUNS_INDEX,
  buildRunIndexes,
  purgeRealmRuns,
  RUNS_SCOPE,
  realmRunsIndex,
  runsPage,
  startRecord,
} from "../../../src/workers/bridge/store.ts";
import { stateEachTest } from "../../helpers/engine.ts";

function run(id: string, second: number, fields: Partial<BridgeRun> = {}): BridgeRun {
  return {
    id,
    runtimeId: "rt-a",
    kind: "process",
    agentId: null,
    realmId: "realm-1",
    status: "completed",
    output: "x".repeat(1000),
    error: null,
    exitCode: 0,
    pid: null,
    truncated: false,
    startedAt: new Date(Date.UTC(2030, 0, 1, 0, 0, second)).toISOString(),
    finishedAt: null,
    ...fields,
  };
}

describe("bridge run listings", () => {
  const state = stateEachTest();

  const ids = (page: { runs: BridgeRun[] }) => page.runs.map((entry) => entry.id);

  it("pages newest first from the caller's index, by runtime, reading only the page's runs", async () => {
    await startRecord(state, run("r1", 1));
    await startRecord(state, run("r2", 2, { runtimeId: "rt-b" }));
    await startRecord(state, run("r3", 3, { realmId: "realm-2" }));
    await startRecord(state, run("r4", 4, { realmId: null }));
    await startRecord(state, run("r5", 5));
    const first = await runsPage(state, ALL_RUNS_INDEX, { limit: 2 });
    expect(ids(first)).toEqual(["r5", "r4"]);
    const second = await runsPage(state, ALL_RUNS_INDEX, { limit: 2, cursor: first.nextCursor ?? "" });
    expect(ids(second)).toEqual(["r3", "r2"]);
    const third = await runsPage(state, ALL_RUNS_INDEX, { limit: 2, cursor: second.nextCursor ?? "" });
    expect(ids(third)).toEqual(["r1"]);
    expect(third.nextCursor).toBeNull();
    expect(ids(await runsPage(state, realmRunsIndex("realm-1"), { limit: 10 }))).toEqual(["r5", "r2", "r1"]);
    expect(ids(await runsPage(state, realmRunsIndex("realm-1"), { limit: 10, runtimeId: "rt-a" }))).toEqual([
      "r5",
      "r1",
    ]);
  });

  it("indexes once, at start, the runs an older build stored without entries", async () => {
    for (const [id, second] of [
      ["old1", 1],
      ["old2", 2],
    ] as const) {
      await state.set(RUNS_SCOPE, id, run(id, second));
    }
    expect(ids(await runsPage(state, ALL_RUNS_INDEX, { limit: 10 }))).toEqual([]);
    await buildRunIndexes(state);
    expect(ids(await runsPage(state, realmRunsIndex("realm-1"), { limit: 10 }))).toEqual(["old2", "old1"]);
    // Done once: a run stored later without entries (none is) would not be picked up again.
    await state.set(RUNS_SCOPE, "old3", run("old3", 3));
    await buildRunIndexes(state);
    expect(ids(await runsPage(state, ALL_RUNS_INDEX, { limit: 10 }))).toEqual(["old2", "old1"]);
  });

  it("takes a realm's runs and their entries away with the realm", async () => {
    await startRecord(state, run("keep", 1, { realmId: "realm-2" }));
    await startRecord(state, run("gone", 2));
    expect(await purgeRealmRuns(state, "realm-1")).toBe(1);
    expect(ids(await runsPage(state, ALL_RUNS_INDEX, { limit: 10 }))).toEqual(["keep"]);
    expect((await state.list(realmRunsIndex("realm-1"), { limit: 10 })).items).toEqual([]);
  });

  it("refuses a cursor it did not hand out", async () => {
    await expect(runsPage(state, ALL_RUNS_INDEX, { limit: 2, cursor: "not-a-cursor" })).rejects.toMatchObject(
      {
        status: 400,
      },
    );
  });
});
