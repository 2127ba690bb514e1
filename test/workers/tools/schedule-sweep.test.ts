import { describe, expect, it } from "vitest";
import type { TriggerRequest } from "../../../src/engine/types.ts";
import {
  assertAtMostOncePerMinute,
  type Job,
  jobsScope,
  saveJob,
} from "../../../src/workers/tools/schedule/store.ts";
import { SCAN, sweepDue } from "../../../src/workers/tools/schedule/sweep.ts";
import { deferred, stateEachTest } from "../../helpers/engine.ts";

const REALM = "realm-default";
const START = new Date("2030-01-01T00:00:00.000Z");
const at = (seconds: number) => new Date(START.getTime() + seconds * 1000);

function job(schedule: string, fields: Partial<Job> = {}): Job {
  return {
    id: "job-1",
    kind: "cron",
    name: schedule,
    agentId: "agent-1",
    realmId: REALM,
    schedule,
    message: "tick",
    status: "scheduled",
    nextRunAt: START.toISOString(),
    lastRunAt: null,
    lastError: null,
    runs: 0,
    createdAt: START.toISOString(),
    ...fields,
  };
}

/** A one-time job of an agent of the realm, due `seconds` after START. */
const reminder = (realmId: string, id: string, seconds: number) =>
  job("", {
    id,
    realmId,
    agentId: `agent-${realmId}`,
    kind: "reminder",
    schedule: null,
    nextRunAt: at(seconds).toISOString(),
  });

/** A trigger whose calls (the agents' turns) end only when the test says so. */
function turns() {
  const calls: Array<{ request: TriggerRequest; end: () => void }> = [];
  const trigger = (request: TriggerRequest) => {
    const { promise, resolve } = deferred<unknown>();
    calls.push({ request, end: () => resolve({ content: "done" }) });
    return promise;
  };
  return { calls, trigger };
}

describe("the job sweep", () => {
  const state = stateEachTest();

  const stored = async () => (await state.get<Job>(jobsScope(REALM), "job-1")) as Job;
  /** The fire's end is written after the turn's promise settles. */
  const settled = () => expect.poll(async () => (await stored()).runningSince ?? null).toBeNull();

  it("fires a recurring job at each due time until it is deleted", async () => {
    const { calls, trigger } = turns();
    await saveJob(state, job("0 * * * * *"));
    expect(await sweepDue(state, trigger, at(0))).toBe(1);
    calls[0]?.end();
    await settled();
    expect(await stored()).toMatchObject({ runs: 1, nextRunAt: at(60).toISOString() });
    expect(await sweepDue(state, trigger, at(30))).toBe(0);
    expect(await sweepDue(state, trigger, at(60))).toBe(1);
    expect(calls.map((call) => call.request.payload)).toEqual([
      { agentId: "agent-1", message: "tick", sessionId: "cron:job-1" },
      { agentId: "agent-1", message: "tick", sessionId: "cron:job-1" },
    ]);
  });

  it("skips a due time while the previous turn is still under way, and fires again once it ended", async () => {
    const { calls, trigger } = turns();
    await saveJob(state, job("0 * * * * *"));
    expect(await sweepDue(state, trigger, at(0))).toBe(1);
    // The turn of 00:00 is still running at 00:01 and 00:02: neither starts a second one.
    expect(await sweepDue(state, trigger, at(60))).toBe(0);
    expect(await sweepDue(state, trigger, at(120))).toBe(0);
    expect(calls).toHaveLength(1);
    expect(await stored()).toMatchObject({ runs: 1, skipped: 2, nextRunAt: at(180).toISOString() });
    calls[0]?.end();
    await settled();
    expect(await sweepDue(state, trigger, at(180))).toBe(1);
    expect(calls).toHaveLength(2);
  });

  it("fires again when a turn never reported its end (its process died)", async () => {
    const { calls, trigger } = turns();
    await saveJob(state, job("0 * * * * *", { runningSince: at(-3600).toISOString() }));
    expect(await sweepDue(state, trigger, at(0))).toBe(1);
    expect(calls).toHaveLength(1);
  });

  it("spaces an agent's stored every-second job a minute apart, but not an operator's hand", async () => {
    const { calls, trigger } = turns();
    // As an older build could store it: every second.
    await saveJob(state, job("* * * * * *"));
    await sweepDue(state, trigger, at(0));
    calls[0]?.end();
    await settled();
    expect((await stored()).nextRunAt).toBe(at(60).toISOString());
    await saveJob(state, job("* * * * * *", { id: "job-2", workflowId: "hand-x" }));
    await sweepDue(state, trigger, at(0));
    const hand = (await state.get<Job>(jobsScope(REALM), "job-2")) as Job;
    expect(hand.nextRunAt).toBe(at(1).toISOString());
  });

  it("shares a sweep among realms: one realm's many due jobs do not hold back another's", async () => {
    const { calls, trigger } = turns();
    // Realm A's 150 reminders all came due before realm B's one: more than a sweep fires.
    for (let i = 0; i < 150; i++) await saveJob(state, reminder("realm-a", `job-a${i}`, -200 + i));
    await saveJob(state, reminder("realm-b", "job-b", 0));
    const fired = await sweepDue(state, trigger, at(0));
    const agents = calls.map((call) => (call.request.payload as { agentId: string }).agentId);
    expect(agents).toContain("agent-realm-b");
    expect(fired).toBe(agents.length);
    // The rest of realm A's come in the next sweeps, oldest first.
    expect(agents.filter((agent) => agent === "agent-realm-a").length).toBe(fired - 1);
    expect(await sweepDue(state, trigger, at(0))).toBe(150 - (fired - 1));
    for (const call of calls) call.end();
  });

  it("reaches another realm's due job within a few sweeps behind a backlog larger than one sweep reads", async () => {
    const { calls, trigger } = turns();
    // Realm A's backlog is three times what a sweep reads, all of it older than realm B's one job.
    for (let i = 0; i < 3 * SCAN; i++) {
      await saveJob(state, reminder("realm-a", `job-a${i}`, -4 * SCAN + i));
    }
    await saveJob(state, reminder("realm-b", "job-b", 0));
    const firedB = () =>
      calls.some((call) => (call.request.payload as { agentId: string }).agentId === "agent-realm-b");
    // Each sweep reads on where the last stopped: B's entry is read by the fourth (worked off in
    // order, A's backlog would hide it for twenty sweeps).
    for (let sweep = 0; sweep < 4 && !firedB(); sweep++) await sweepDue(state, trigger, at(0));
    expect(firedB()).toBe(true);
    for (const call of calls) call.end();
  });

  it("refuses an agent's schedule that fires more often than once a minute", () => {
    for (const schedule of ["* * * * * *", "*/30 * * * * *", "0,59 * * * * *", "5,6 0 12 * * *"]) {
      expect(() => assertAtMostOncePerMinute(schedule, START), schedule).toThrow(/at most once a minute/);
    }
    for (const schedule of ["0 * * * * *", "*/5 * * * *", "0 0 9 * * 1-5", "30 */2 * * * *"]) {
      expect(() => assertAtMostOncePerMinute(schedule, START), schedule).not.toThrow();
    }
  });
});
