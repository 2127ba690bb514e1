import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../../../src/engine/engine.ts";
import { stateClient } from "../../../src/engine/state/client.ts";
import { setClock } from "../../../src/shared/clock.ts";
import { DAY_MS } from "../../../src/shared/retention.ts";
import { isPrunableVersion } from "../../../src/workers/kg/retention.ts";
import { versionKey, versionsScope } from "../../../src/workers/kg/store.ts";
import type { JsonBody } from "../../helpers/server.ts";
import { kgBackends } from "./backends.ts";

const backends = await kgBackends("KG retention test", { AGENTOS_KG_HISTORY_RETENTION_DAYS: "30" });

describe("isPrunableVersion", () => {
  const cutoff = 1_000_000;
  it("takes versions superseded before the cutoff only, never a current one", () => {
    expect(isPrunableVersion({ validUntil: cutoff - 1 }, cutoff)).toBe(true);
    expect(isPrunableVersion({ validUntil: cutoff }, cutoff)).toBe(false);
    expect(isPrunableVersion({ validUntil: cutoff + 1 }, cutoff)).toBe(false);
    expect(isPrunableVersion({ validUntil: null }, cutoff)).toBe(false);
  });
});

/** Epoch of the controlled clock: all versions are made at known days after it. */
const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const at = (days: number) => T0 + days * DAY_MS;

describe.each(backends)("knowledge-graph history retention ($name)", ({ start }) => {
  let engine: Engine;
  let close: () => Promise<void>;
  const trigger = (function_id: string, payload: unknown) => engine.trigger({ function_id, payload });
  const call = (function_id: string, payload: unknown) => trigger(function_id, payload) as Promise<JsonBody>;

  beforeAll(async () => {
    ({ engine, close } = await start());
  });
  afterAll(async () => {
    await close();
  });
  afterEach(() => setClock(null));

  /** A realm with an agent, and the entity `e` added at each of the given days (the last one current). */
  async function graph(name: string, days: number[]) {
    const realmId = (await call("realm::create", { name, owner: "t" })).id as string;
    const agentId = (await call("agent::create", { name: `${name}-agent`, realmId })).id as string;
    for (const [index, day] of days.entries()) {
      setClock({ now: () => at(day) });
      await call("kg::add_temporal", {
        agentId,
        entity: "e",
        type: "thing",
        properties: { n: index + 1 },
        relations: [{ target: `t${index + 1}`, type: "knows" }],
      });
    }
    await call("kg::add_temporal", {
      agentId,
      entity: "f",
      type: "thing",
      relations: [{ target: "e", type: "likes" }],
    });
    return { realmId, agentId };
  }

  it("prunes superseded versions older than the retention, keeps every current one and what now needs", async () => {
    // Versions 1..4 of e: 1 and 2 ended (days 1, 2) before the cutoff (day 40 - 30 = 10); 3 ended at day 20.
    const one = await graph("kg-ret-a", [0, 1, 2, 20]);
    const other = await graph("kg-ret-b", [0, 1]);
    setClock({ now: () => at(40) });
    const before = {
      stats: await call("kg::stats", { agentId: one.agentId }),
      now: await call("kg::query_temporal", { agentId: one.agentId, entity: "e", depth: 1 }),
    };

    const swept = await call("kg::sweep_retention", {});
    // e's versions 1 and 2 of the first graph, e's version 1 of the other (ended day 1).
    expect(swept).toEqual({ deleted: 3 });

    const state = stateClient((request) => engine.trigger(request));
    for (const n of [1, 2])
      expect(await state.get(versionsScope(one.agentId), versionKey("e", n))).toBeNull();
    expect(await state.get(versionsScope(other.agentId), versionKey("e", 1))).toBeNull();
    // The current version of every entity, and the one superseded since the cutoff, stay.
    const timeline = await call("kg::timeline", { agentId: one.agentId, entity: "e" });
    expect(timeline.map((version: { version: number }) => version.version)).toEqual([3, 4]);
    expect((await call("kg::timeline", { agentId: other.agentId, entity: "e" })).length).toBe(1);
    expect(await call("kg::stats", { agentId: one.agentId })).toEqual(before.stats);
    expect(await call("kg::query_temporal", { agentId: one.agentId, entity: "e", depth: 1 })).toEqual(
      before.now,
    );

    // Point-in-time answers over what is kept: the binary searches step over the pruned versions.
    const diff = await call("kg::diff", {
      agentId: one.agentId,
      entity: "e",
      timestamp1: at(15),
      timestamp2: at(30),
    });
    expect([diff.fromVersion, diff.toVersion]).toEqual([3, 4]);
    expect(diff.modified).toEqual([{ property: "n", before: 3, after: 4 }]);
    const ranged = await call("kg::query_temporal", {
      agentId: one.agentId,
      entity: "e",
      depth: 0,
      timeRange: { from: at(0), to: at(25) },
    });
    expect(ranged.map((version: { version: number }) => version.version)).toEqual([3, 4]);
    // A time only pruned versions covered is no longer known.
    const gone = await call("kg::diff", {
      agentId: one.agentId,
      entity: "e",
      timestamp1: at(1.5),
      timestamp2: at(30),
    });
    expect([gone.fromVersion, gone.toVersion]).toEqual([null, 4]);

    // A second pass finds nothing more.
    expect(await call("kg::sweep_retention", {})).toEqual({ deleted: 0 });
  }, 60_000);
});
