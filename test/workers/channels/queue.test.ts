import { describe, expect, it } from "vitest";
import {
  enqueue,
  LEGACY_QUEUE_SCOPE,
  QUEUED_REALMS_SCOPE,
  QueueRunner,
  queueScope,
} from "../../../src/workers/channels/queue.ts";
import type { ChannelJob } from "../../../src/workers/channels/schema.ts";
import { stateEachTest } from "../../helpers/engine.ts";

function job(id: string, realmId: string): ChannelJob {
  return {
    id,
    platform: "slack",
    realmId,
    agentId: `agent-of-${realmId}`,
    sessionId: "slack:C1",
    phase: "turn",
    text: "hello",
    replyTo: {},
    attempts: 0,
    createdAt: new Date().toISOString(),
  };
}

/** Jobs being worked on, each ended by the test: `end(id)` finishes it, `fail(id)` makes it throw. */
function workers() {
  const open = new Map<string, { end: () => void; fail: () => void }>();
  const started: string[] = [];
  const work = (item: ChannelJob) => {
    started.push(item.id);
    return new Promise<null>((resolve, reject) => {
      open.set(item.id, { end: () => resolve(null), fail: () => reject(new Error("platform down")) });
    });
  };
  return {
    work,
    started,
    end: (id: string) => open.get(id)?.end(),
    fail: (id: string) => open.get(id)?.fail(),
  };
}

describe("the channel job queue", () => {
  const state = stateEachTest();

  it("gives a freed place to another realm's job, not to the flooded realm's backlog", async () => {
    const jobs = workers();
    const runner = new QueueRunner(state, jobs.work, 4);
    for (let i = 0; i < 20; i++) await enqueue(state, job(`a${i}`, "realm-a"), Date.now() - 60_000 + i);
    expect(await runner.runDue()).toBe(4);
    await enqueue(state, job("b0", "realm-b"));
    expect(await runner.runDue()).toBe(0);
    jobs.end("a0");
    await expect.poll(() => runner.inFlight()).toBe(3);
    expect(await runner.runDue()).toBe(1);
    expect(jobs.started).toEqual(["a0", "a1", "a2", "a3", "b0"]);
  });

  it("works on at most its limit of jobs at once, all realms together", async () => {
    const jobs = workers();
    const runner = new QueueRunner(state, jobs.work, 5);
    for (let i = 0; i < 12; i++) await enqueue(state, job(`j${i}`, `realm-${i % 3}`));
    expect(await runner.runDue()).toBe(5);
    expect(await runner.runDue()).toBe(0);
    expect(runner.inFlight()).toBe(5);
    // Shared out: no realm has more than one job more than another.
    const counts = [0, 1, 2].map((i) => runner.inFlight(`realm-${i}`));
    expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
  });

  it("forgets an emptied realm queue and finds it again when a job is queued", async () => {
    const jobs = workers();
    const runner = new QueueRunner(state, jobs.work, 4);
    await enqueue(state, job("x0", "realm-x"));
    expect(await runner.runDue()).toBe(1);
    jobs.end("x0");
    await expect.poll(() => runner.inFlight()).toBe(0);
    expect(await runner.runDue()).toBe(0);
    expect((await state.list(QUEUED_REALMS_SCOPE, { limit: 10 })).items).toEqual([]);
    await enqueue(state, job("x1", "realm-x"));
    expect(await runner.runDue()).toBe(1);
    expect(jobs.started).toEqual(["x0", "x1"]);
  });

  it("still runs jobs an older build left in the one shared queue, retrying them in their realm's", async () => {
    const jobs = workers();
    const runner = new QueueRunner(state, jobs.work, 4);
    const old = job("legacy", "realm-l");
    await state.set(LEGACY_QUEUE_SCOPE, `${new Date(Date.now() - 1000).toISOString()}\u0001legacy`, old);
    expect(await runner.runDue()).toBe(1);
    jobs.fail("legacy");
    await expect.poll(() => runner.inFlight()).toBe(0);
    expect((await state.list(LEGACY_QUEUE_SCOPE, { limit: 10 })).items).toEqual([]);
    const retried = (await state.list<ChannelJob>(queueScope("realm-l"), { limit: 10 })).items;
    expect(retried.map(({ value }) => [value.id, value.attempts, value.lastError])).toEqual([
      ["legacy", 1, "platform down"],
    ]);
  });

  it("runs a sweep asked for during a sweep right after it, never two at once", async () => {
    const jobs = workers();
    const runner = new QueueRunner(state, jobs.work, 10);
    await enqueue(state, job("s0", "realm-s"));
    const first = runner.sweep();
    await enqueue(state, job("s1", "realm-s"));
    const second = runner.sweep();
    expect(second).toBe(first);
    expect(await first).toBe(2);
  });
});
