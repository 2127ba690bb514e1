import { afterEach, describe, expect, it } from "vitest";
import { setClock } from "../../../src/shared/clock.ts";
import { newId } from "../../../src/shared/ids.ts";
import { DAY_MS } from "../../../src/shared/retention.ts";
import { isExpiredRun, sweepRuns } from "../../../src/workers/workflow/retention.ts";
import type { Run, RunStatus } from "../../../src/workers/workflow/schema.ts";
import {
  listRuns,
  loadRun,
  RUNS_SCOPE,
  saveRun,
  startRun,
  stepsScope,
} from "../../../src/workers/workflow/store.ts";
import { stateEachTest } from "../../helpers/engine.ts";
import { json, startTestServer, type TestServer } from "../../helpers/server.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const at = (days: number) => T0 + days * DAY_MS;
const iso = (days: number) => new Date(at(days)).toISOString();

afterEach(() => setClock(null));

describe("isExpiredRun", () => {
  const cutoff = at(10);
  it("takes finished runs that ended before the cutoff, never a running one", () => {
    for (const status of ["completed", "failed", "cancelled", "interrupted"] as const) {
      expect(isExpiredRun({ status, finishedAt: iso(9) }, cutoff)).toBe(true);
      expect(isExpiredRun({ status, finishedAt: iso(10) }, cutoff)).toBe(false);
      expect(isExpiredRun({ status, finishedAt: iso(11) }, cutoff)).toBe(false);
    }
    expect(isExpiredRun({ status: "running", finishedAt: iso(1) }, cutoff)).toBe(false);
    expect(isExpiredRun({ status: "running" }, cutoff)).toBe(false);
    // No finish time to judge by (or one that does not parse): kept.
    expect(isExpiredRun({ status: "completed" }, cutoff)).toBe(false);
    expect(isExpiredRun({ status: "failed", finishedAt: "garbage" }, cutoff)).toBe(false);
  });
});

describe("sweepRuns", () => {
  const state = stateEachTest();

  /** A run of `workflowId` in `realmId`, started on day `started` with two step results, ended on day `ended`. */
  async function storedRun(
    realmId: string,
    workflowId: string,
    status: RunStatus,
    started: number,
    ended?: number,
  ): Promise<Run> {
    setClock({ now: () => at(started) });
    const run: Run = {
      runId: newId("run"),
      workflowId,
      realmId,
      status: "running",
      input: null,
      results: [],
      vars: {},
      position: 0,
      startedAt: iso(started),
    };
    await startRun(state, run);
    run.results.push(
      { stepName: "a", output: 1, durationMs: 1 },
      { stepName: "b", output: 2, durationMs: 1 },
    );
    if (ended !== undefined) {
      setClock({ now: () => at(ended) });
      run.status = status;
      run.finishedAt = iso(ended);
    }
    await saveRun(state, run);
    return run;
  }

  it("deletes finished runs older than the retention with their steps, keeps running and recent ones, in every realm", async () => {
    const old = [
      await storedRun("realm-a", "wf", "completed", 0, 1),
      await storedRun("realm-a", "wf", "failed", 1, 2),
      await storedRun("realm-b", "wf", "cancelled", 2, 3),
      await storedRun("realm-b", "other", "interrupted", 3, 4),
    ];
    const kept = [
      // Running for 40 days: never deleted, however old.
      await storedRun("realm-a", "wf", "running", 0),
      // Started long ago, finished after the cutoff.
      await storedRun("realm-a", "wf", "completed", 0, 20),
      await storedRun("realm-b", "wf", "completed", 35, 36),
    ];
    setClock({ now: () => at(40) });

    expect(await sweepRuns(state, at(10), at(40))).toBe(old.length);

    for (const run of old) {
      expect(await loadRun(state, run.runId)).toBeNull();
      expect((await state.list(stepsScope(run.runId))).items).toEqual([]);
    }
    for (const run of kept) expect((await loadRun(state, run.runId))?.results.length).toBe(2);
    // Listings and their totals count what is left, realm by realm.
    const listed = async (realmId: string, workflowId: string) => {
      const page = await listRuns(state, realmId, workflowId, 10, 0);
      return { total: page.total, ids: page.runs.map((run) => run.runId).sort() };
    };
    expect(await listed("realm-a", "wf")).toEqual({ total: 2, ids: [kept[0]?.runId, kept[1]?.runId].sort() });
    expect(await listed("realm-b", "wf")).toEqual({ total: 1, ids: [kept[2]?.runId] });
    expect(await listed("realm-b", "other")).toEqual({ total: 0, ids: [] });
    expect(await sweepRuns(state, at(10), at(40))).toBe(0);
  });

  it("reads runs with ids of other forms (written before ids carried their time) past the retained window", async () => {
    const legacy = await storedRun("realm-a", "wf", "completed", 0, 1);
    // Moved to an id that sorts after every time-ordered one, as most random (v4) ids do.
    const record = await state.get<Record<string, unknown>>(RUNS_SCOPE, legacy.runId);
    await state.delete(RUNS_SCOPE, legacy.runId);
    const legacyId = "run-f0000000-0000-4000-8000-000000000000";
    await state.set(RUNS_SCOPE, legacyId, { ...record, runId: legacyId });
    const recent = await storedRun("realm-a", "wf", "completed", 35, 36);
    expect(await sweepRuns(state, at(10), at(40))).toBe(1);
    expect(await state.get(RUNS_SCOPE, legacyId)).toBeNull();
    expect(await loadRun(state, recent.runId)).not.toBeNull();
  });

  it("keeps a run retried after the sweep read it (the delete is conditional on the record read)", async () => {
    const run = await storedRun("realm-a", "wf", "failed", 0, 1);
    // The retry's write lands between the sweep's read of the run and its delete.
    let retried = false;
    const racingGet = async <T>(scope: string, key: string) => {
      if (!retried && scope.startsWith("workflow_run_index")) {
        retried = true;
        const read = await state.get<Record<string, unknown>>(RUNS_SCOPE, run.runId);
        await state.set(RUNS_SCOPE, run.runId, { ...read, status: "running" });
      }
      return state.get<T>(scope, key);
    };
    const racing = new Proxy(state, {
      get: (target, property) => (property === "get" ? racingGet : Reflect.get(target, property)),
    });
    expect(await sweepRuns(racing, at(10), at(40))).toBe(0);
    expect(retried).toBe(true);
    expect(await loadRun(state, run.runId)).toMatchObject({ status: "running", results: run.results });
    expect((await listRuns(state, "realm-a", "wf", 10, 0)).total).toBe(1);
  });
});

describe("workflow run retention in the service", () => {
  let server: TestServer;
  afterEach(async () => {
    setClock(null);
    await server?.close();
  });

  it("deletes finished runs past AGENTOS_WORKFLOW_RUN_RETENTION_DAYS from listings, never a running one", async () => {
    server = await startTestServer({ workflowRunRetentionDays: 30 });
    const worker = server.service.engine.worker("test");
    worker.registerFunction({ id: "test::upper" }, (payload) =>
      String((payload as { input: unknown }).input).toUpperCase(),
    );
    let release: (value: string) => void = () => undefined;
    const held = new Promise<string>((resolve) => {
      release = resolve;
    });
    worker.registerFunction({ id: "test::held" }, () => held);
    const create = async (id: string, functionId: string) => {
      const response = await server.request("/api/workflows", {
        method: "POST",
        json: { id, name: id, steps: [{ name: "s", functionId }] },
      });
      expect(response.status).toBe(201);
    };
    await create("quick", "test::upper");
    await create("slow", "test::held");
    const run = async (workflowId: string, async = false) =>
      json(
        await server.request("/api/workflows/run", {
          method: "POST",
          json: { workflowId, input: "x", async },
        }),
      );
    const runs = async (workflowId: string) =>
      json(await server.request(`/api/workflows/${workflowId}/runs`));

    setClock({ now: () => at(0) });
    const old = [await run("quick"), await run("quick")];
    const running = await run("slow", true);
    setClock({ now: () => at(40) });
    const recent = await run("quick");
    expect((await runs("quick")).total).toBe(3);

    const swept = await server.service.engine.trigger({
      function_id: "workflow::sweep_retention",
      payload: {},
    });
    expect(swept).toEqual({ deleted: 2 });

    const listed = await runs("quick");
    expect(listed.total).toBe(1);
    expect(listed.runs.map((entry: { runId: string }) => entry.runId)).toEqual([recent.runId]);
    for (const gone of old) {
      expect((await server.request(`/api/workflows/runs/${gone.runId}`)).status).toBe(404);
    }
    expect((await runs("slow")).runs.map((entry: { status: string }) => entry.status)).toEqual(["running"]);
    release("done");
    await expect.poll(async () => (await runs("slow")).runs[0]?.status).toBe("completed");
    expect((await runs("slow")).runs[0]?.runId).toBe(running.runId);
  });

  it("deletes nothing without a retention (the default)", async () => {
    server = await startTestServer();
    const swept = await server.service.engine.trigger({
      function_id: "workflow::sweep_retention",
      payload: {},
    });
    expect(swept).toEqual({ deleted: 0 });
  });
});
