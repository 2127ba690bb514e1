import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cron } from "croner";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Engine } from "../../../src/engine/engine.ts";
import { createEngine } from "../../../src/engine/index.ts";
import { registerStateFunctions } from "../../../src/engine/state/functions.ts";
import { PostgresStateStore } from "../../../src/engine/state/postgres.ts";
import { SqliteStateStore } from "../../../src/engine/state/sqlite.ts";
import type { StateStore } from "../../../src/engine/state/types.ts";
import {
  CRON_CLAIMS_SCOPE,
  CRON_SWEEP_WINDOW_MS,
  CronTriggerType,
  cronTickKey,
  StateCronClaims,
  scheduledTick,
} from "../../../src/engine/trigger-types/cron.ts";
import type { TriggerRecord, TriggerRequest } from "../../../src/engine/types.ts";
import { setClock } from "../../../src/shared/clock.ts";
import { AppError } from "../../../src/shared/errors.ts";
import { silentLogger } from "../../../src/shared/logger.ts";
import { createCapturingLogger } from "../../helpers/engine.ts";
import { dropSchema, findTestPostgres, uniqueSchema } from "../state/contract.ts";

type CronPayload = { trigger: string; job_id: string; scheduled_time: string; actual_time: string };
type Fired = { node: string; payload: CronPayload };

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  setClock(null);
  while (cleanups.length > 0) await cleanups.pop()?.();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "agentos-cron-claims-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** One cluster node: an engine with cron claims over its own connection to the shared state. */
function node(name: string, store: StateStore, fired: Fired[]): Engine {
  const engine = createEngine({ logger: silentLogger(), cronClaims: { node: name } });
  registerStateFunctions(engine, store);
  engine.registerFunction("cron-test", { id: "cron::tick" }, (payload) => {
    fired.push({ node: name, payload: payload as CronPayload });
  });
  cleanups.push(async () => {
    engine.shutdown();
    await engine.drain();
  });
  return engine;
}

function everySecond(engine: Engine): string {
  return engine.registerTrigger("cron-test", {
    type: "cron",
    function_id: "cron::tick",
    config: { expression: "* * * * * *" },
  }).id;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Two nodes over the given stores, each scheduling the same every-second trigger for about three
 * seconds, then stopped (and `settleMs` for claims in flight): the ticks each fired.
 */
async function runTwoNodes(storeA: StateStore, storeB: StateStore, settleMs: number): Promise<Fired[]> {
  cleanups.push(
    () => storeA.close(),
    () => storeB.close(),
  );
  const fired: Fired[] = [];
  const [a, b] = [node("A", storeA, fired), node("B", storeB, fired)];
  everySecond(a);
  everySecond(b);
  await sleep(3_200);
  a.shutdown();
  b.shutdown();
  await sleep(settleMs);
  return fired;
}

/** Every tick fired exactly once, by one node or the other, and every one was claimed in state. */
async function expectEachTickOnce(fired: Fired[], store: StateStore): Promise<void> {
  const seconds = fired.map((entry) => entry.payload.scheduled_time);
  expect(seconds.length).toBeGreaterThanOrEqual(2);
  expect(new Set(seconds).size).toBe(seconds.length);
  const claims = await store.list(CRON_CLAIMS_SCOPE, { limit: 1000 });
  for (const entry of fired) {
    const key = cronTickKey(new Date(entry.payload.scheduled_time), "cron::tick", "* * * * * *");
    const claim = claims.items.find((item) => item.key === key);
    expect(claim?.value, key).toMatchObject({ node: entry.node });
  }
}

describe("cron tick keys", () => {
  it("name the scheduled second first, then the function and the normalised expression", () => {
    const at = new Date("2030-01-01T10:00:05.000Z");
    expect(cronTickKey(at, "pulse::tick", " 0  */5 * * * * ")).toBe(
      "2030-01-01T10:00:05.000Z|pulse::tick|0 */5 * * * *",
    );
  });

  it("map a late run back to the tick it belongs to", () => {
    const minutely = new Cron("0 * * * * *", { timezone: "UTC", paused: true });
    const everySecondJob = new Cron("* * * * * *", { timezone: "UTC", paused: true });
    cleanups.push(
      () => minutely.stop(),
      () => everySecondJob.stop(),
    );
    const onTime = new Date("2030-01-01T10:05:00.004Z");
    expect(scheduledTick(minutely, onTime).toISOString()).toBe("2030-01-01T10:05:00.000Z");
    // The event loop was blocked: the run fires 2.3 s late and still names the minute.
    expect(scheduledTick(minutely, new Date("2030-01-01T10:05:02.300Z")).toISOString()).toBe(
      "2030-01-01T10:05:00.000Z",
    );
    // Late by a whole period: the documented caveat, the run names the later tick.
    expect(scheduledTick(everySecondJob, new Date("2030-01-01T10:05:01.200Z")).toISOString()).toBe(
      "2030-01-01T10:05:01.000Z",
    );
  });
});

describe("CronTriggerType with a claim hook", () => {
  const record: TriggerRecord = {
    id: "t1",
    type: "cron",
    function_id: "cron::tick",
    config: { expression: "* * * * * *" },
    worker: "cron-test",
  };

  function cronWith(claim: (tickKey: string) => Promise<boolean>) {
    const calls: TriggerRequest[] = [];
    const { logger, entries } = createCapturingLogger();
    const cron = new CronTriggerType(async (request) => calls.push(request), logger, { claim });
    cleanups.push(() => cron.unregister(record));
    return { cron, calls, entries };
  }

  it("runs a tick only when the claim succeeds, under the tick's key", async () => {
    const keys: string[] = [];
    let win = false;
    const { cron, calls } = cronWith(async (tickKey) => {
      keys.push(tickKey);
      win = !win;
      return win;
    });
    cron.register(record);
    await vi.waitFor(() => expect(keys.length).toBeGreaterThanOrEqual(2), { timeout: 4_000, interval: 50 });
    cron.unregister(record);
    await sleep(50);
    expect(keys[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z\|cron::tick\|\* \* \* \* \* \*$/);
    const won = keys.filter((_, i) => i % 2 === 0);
    expect(calls.map((call) => (call.payload as CronPayload).scheduled_time)).toEqual(
      won.map((key) => key.split("|")[0]),
    );
  });

  it("skips the tick and logs when the claim fails", async () => {
    const { cron, calls, entries } = cronWith(async () => {
      throw new Error("database unreachable");
    });
    cron.register(record);
    await vi.waitFor(
      () =>
        expect(entries.filter((entry) => entry.msg.includes("cron tick skipped")).length).toBeGreaterThan(0),
      { timeout: 3_000, interval: 50 },
    );
    expect(calls).toEqual([]);
  });

  it("does not run a claimed tick once the trigger is gone", async () => {
    let release!: (won: boolean) => void;
    const { cron, calls } = cronWith(() => new Promise<boolean>((resolve) => (release = resolve)));
    cron.register(record);
    await vi.waitFor(() => expect(release).toBeDefined(), { timeout: 3_000, interval: 20 });
    cron.unregister(record);
    release(true);
    await sleep(20);
    expect(calls).toEqual([]);
  });
});

describe("cron claims across nodes (state functions)", () => {
  it("fires each every-second tick exactly once across two engines sharing one SQLite state file", async () => {
    const file = join(tempDir(), "agentos.db");
    const [storeA, storeB] = [new SqliteStateStore(file), new SqliteStateStore(file)];
    const fired = await runTwoNodes(storeA, storeB, 100);
    await expectEachTickOnce(fired, storeA);
  });

  it("skips ticks (and runs none twice) when the claim store fails", async () => {
    const { logger, entries } = createCapturingLogger();
    const engine = createEngine({ logger, cronClaims: true });
    cleanups.push(() => engine.shutdown());
    // A state backend that is down: every write fails with something other than a conflict.
    engine.registerFunction("state", { id: "state::set" }, () => {
      throw new AppError("unavailable", "state backend down");
    });
    const fired: CronPayload[] = [];
    engine.registerFunction("cron-test", { id: "cron::tick" }, (payload) => {
      fired.push(payload as CronPayload);
    });
    everySecond(engine);
    await vi.waitFor(
      () =>
        expect(entries.filter((entry) => entry.msg.includes("cron tick skipped")).length).toBeGreaterThan(0),
      { timeout: 3_000, interval: 50 },
    );
    expect(fired).toEqual([]);
  });

  it("fires each tick once when two engines share one store instance", async () => {
    // Both nodes register the same schedule under different trigger ids (ids are random per node).
    const store = new SqliteStateStore(join(tempDir(), "agentos.db"));
    cleanups.push(() => store.close());
    const fired: Fired[] = [];
    const a = node("A", store, fired);
    const b = node("B", store, fired);
    expect(everySecond(a)).not.toBe(everySecond(b));
    await sleep(2_200);
    a.shutdown();
    b.shutdown();
    await sleep(100);
    await expectEachTickOnce(fired, store);
  });
});

describe("sweeping old cron claims", () => {
  const NOW = Date.UTC(2030, 5, 1, 12, 3, 0);
  const iso = (ms: number) => new Date(ms).toISOString();
  const MIN = 60_000;

  function claimsOver(store: StateStore, name: string) {
    const engine = createEngine({ logger: silentLogger() });
    registerStateFunctions(engine, store);
    cleanups.push(() => engine.shutdown());
    return new StateCronClaims(engine.trigger.bind(engine), { logger: silentLogger(), node: name });
  }

  async function keys(store: StateStore): Promise<string[]> {
    return (await store.list(CRON_CLAIMS_SCOPE, { limit: 1000 })).items.map((item) => item.key);
  }

  async function seed(store: StateStore, ...times: number[]): Promise<string[]> {
    const seeded = times.map((time) => `${iso(time)}|cron::tick|0 * * * * *`);
    for (const key of seeded)
      await store.set(CRON_CLAIMS_SCOPE, key, { node: "old", claimedAt: key.slice(0, 24) });
    return seeded;
  }

  it("deletes claims older than an hour and keeps the rest", async () => {
    const store = new SqliteStateStore(":memory:");
    cleanups.push(() => store.close());
    const claims = claimsOver(store, "A");
    const [, , recent, fresh] = await seed(store, NOW - 3 * 60 * MIN, NOW - 61 * MIN, NOW - 59 * MIN, NOW);
    // More than one page of old claims.
    await seed(store, ...Array.from({ length: 250 }, (_, i) => NOW - 2 * 60 * MIN + i * 1000));
    expect(await claims.sweep(NOW)).toBe(252);
    expect(await keys(store)).toEqual([recent, fresh]);
  });

  it("sweeps at most once per ten-minute window across nodes, from whichever node claims the window", async () => {
    const store = new SqliteStateStore(":memory:");
    cleanups.push(() => store.close());
    setClock({ now: () => clock });
    let clock = NOW;
    const [a, b] = [claimsOver(store, "A"), claimsOver(store, "B")];

    const [old1] = await seed(store, NOW - 2 * 60 * MIN);
    expect(await a.claim(`${iso(NOW)}|f::x|* * * * * *`)).toBe(true);
    await a.idle();
    const windowKey = `${iso(Math.floor(NOW / CRON_SWEEP_WINDOW_MS) * CRON_SWEEP_WINDOW_MS)}|sweep`;
    expect((await store.get(CRON_CLAIMS_SCOPE, windowKey))?.value).toMatchObject({ node: "A" });
    expect(await keys(store)).not.toContain(old1);

    // Same window: node B loses the window's claim, node A does not try again; nothing is swept.
    const [old2] = await seed(store, NOW - 2 * 60 * MIN);
    expect(await b.claim(`${iso(NOW)}|f::x|* * * * * *`)).toBe(false);
    await b.idle();
    clock = NOW + 5 * MIN;
    expect(await a.claim(`${iso(clock)}|f::x|* * * * * *`)).toBe(true);
    await a.idle();
    expect(await keys(store)).toContain(old2);

    // Next window: whichever node claims first sweeps.
    clock = NOW + CRON_SWEEP_WINDOW_MS;
    expect(await b.claim(`${iso(clock)}|f::x|* * * * * *`)).toBe(true);
    await b.idle();
    expect(await keys(store)).not.toContain(old2);
  });
});

const pg = await findTestPostgres();
if (pg.url === null) console.warn(`Skipping PostgreSQL cron claim tests: ${pg.reason}`);

describe.skipIf(pg.url === null)("cron claims across nodes (PostgreSQL)", () => {
  it("fires each every-second tick exactly once across two engines over one PostgreSQL schema", async () => {
    const url = pg.url ?? "";
    const schema = uniqueSchema();
    cleanups.push(() => dropSchema(url, schema));
    const [storeA, storeB] = await Promise.all([
      PostgresStateStore.open({ connectionString: url, schema, max: 4 }),
      PostgresStateStore.open({ connectionString: url, schema, max: 4 }),
    ]);
    const fired = await runTwoNodes(storeA, storeB, 200);
    await expectEachTickOnce(fired, storeB);
    // Both nodes took part: the claims are spread (over a few ticks either may win any one).
    expect(fired.length).toBeGreaterThanOrEqual(2);
  });
});
