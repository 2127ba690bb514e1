import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Engine } from "../../../src/engine/engine.ts";
import type { StateClient } from "../../../src/engine/state/client.ts";
import type { Principal } from "../../../src/engine/types.ts";
import { setClock } from "../../../src/shared/clock.ts";
import { GENESIS_HASH } from "../../../src/shared/hash-chain.ts";
import {
  AUDIT_CHAIN,
  type AuditEntry,
  type AuditPage,
  queryAudit,
} from "../../../src/workers/security/audit.ts";
import { register } from "../../../src/workers/security/index.ts";
import { auditQueryInput } from "../../../src/workers/security/schema.ts";
import { createStateEngine } from "../../helpers/engine.ts";

const admin: Principal = { kind: "admin", keyId: "key-admin" };
const realmKey: Principal = { kind: "realm", keyId: "key-realm", realmId: "realm-a" };

let engine: Engine;
let state: StateClient;
let close: () => Promise<void>;

beforeEach(() => {
  ({ engine, state, close } = createStateEngine());
  register(engine.worker("security"));
});

afterEach(async () => {
  setClock(null);
  await close();
});

const audit = (payload: Record<string, unknown>) =>
  engine.trigger({ function_id: "security::audit", payload }) as Promise<AuditEntry>;

const query = (payload: Record<string, unknown> = {}, auth: Principal = admin) =>
  engine.trigger({ function_id: "security::audit_query", payload, auth }) as Promise<AuditPage>;

const verify = (auth: Principal = admin) =>
  engine.trigger({ function_id: "security::audit_verify", payload: {}, auth }) as Promise<
    Record<string, unknown>
  >;

async function seed(): Promise<void> {
  const records = [
    { type: "vault_set", agentId: "agent-1", at: "2030-01-01T00:00:01.000Z" },
    { type: "channel_message", agentId: "agent-1", at: "2030-01-01T00:00:02.000Z" },
    { type: "vault_set", agentId: "agent-2", at: "2030-01-01T00:00:03.000Z" },
    { type: "channel_message", agentId: "agent-2", at: "2030-01-01T00:00:04.000Z" },
    { type: "vault_set", at: "2030-01-01T00:00:05.000Z" },
  ];
  for (const { at, ...record } of records) {
    setClock({ now: () => Date.parse(at) });
    await audit(record);
  }
  setClock(null);
}

describe("security::audit", () => {
  it("appends an entry to the hash chain and returns it", async () => {
    const entry = await audit({
      type: "vault_set",
      agentId: "agent-1",
      detail: { key: "provider:openai:api_key" },
    });
    expect(entry).toMatchObject({
      seq: 1,
      type: "vault_set",
      agentId: "agent-1",
      detail: { key: "provider:openai:api_key" },
      prevHash: GENESIS_HASH,
    });
    expect(entry.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("rejects unknown members and an empty type", async () => {
    await expect(audit({ type: "x", details: {} })).rejects.toMatchObject({ code: "validation" });
    await expect(audit({ type: "" })).rejects.toMatchObject({ code: "validation" });
  });

  it("records messages published on topic audit, keeping extra members in detail", async () => {
    await engine.trigger({
      function_id: "publish",
      payload: {
        topic: "audit",
        data: { type: "tool_execution", agentId: "agent-1", tools: ["tool::web_fetch"], iteration: 2 },
      },
    });
    await engine.drain();
    const { entries } = await query();
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      type: "tool_execution",
      agentId: "agent-1",
      detail: { tools: ["tool::web_fetch"], iteration: 2 },
    });
  });
});

describe("security::audit_query", () => {
  it("returns entries newest first by default", async () => {
    await seed();
    const { entries, count, nextCursor } = await query();
    expect(entries.map((entry) => entry.seq)).toEqual([5, 4, 3, 2, 1]);
    expect(count).toBe(5);
    expect(nextCursor).toBeNull();
  });

  it("returns entries oldest first with order=asc", async () => {
    await seed();
    const { entries } = await query({ order: "asc" });
    expect(entries.map((entry) => entry.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it("filters by type, agentId and an inclusive time range", async () => {
    await seed();
    expect((await query({ type: "vault_set" })).entries.map((entry) => entry.seq)).toEqual([5, 3, 1]);
    expect((await query({ agentId: "agent-2" })).entries.map((entry) => entry.seq)).toEqual([4, 3]);
    const ranged = await query({
      from: "2030-01-01T00:00:02Z",
      to: "2030-01-01T00:00:04Z",
      type: "channel_message",
    });
    expect(ranged.entries.map((entry) => entry.seq)).toEqual([4, 2]);
    const offset = await query({ from: "2030-01-01T01:00:03+01:00", order: "asc" });
    expect(offset.entries.map((entry) => entry.seq)).toEqual([3, 4, 5]);
  });

  it("pages with limit and cursor, taking limit as text the way a query string carries it", async () => {
    await seed();
    const first = await query({ limit: "2" });
    expect(first.entries.map((entry) => entry.seq)).toEqual([5, 4]);
    const second = await query({ limit: "2", cursor: first.nextCursor });
    expect(second.entries.map((entry) => entry.seq)).toEqual([3, 2]);
    const third = await query({ limit: "2", cursor: second.nextCursor });
    expect(third.entries.map((entry) => entry.seq)).toEqual([1]);
    expect(third.nextCursor).toBeNull();
  });

  it("refuses a limit outside 1-500, a bad cursor, and from after to", async () => {
    for (const payload of [
      { limit: 0 },
      { limit: 501 },
      { cursor: "x" },
      { from: "2030-01-02T00:00:00Z", to: "2030-01-01T00:00:00Z" },
    ]) {
      await expect(query(payload)).rejects.toMatchObject({ code: "validation" });
    }
  });

  it("bounds the entries examined per call and returns a cursor to continue a rare filter", async () => {
    await audit({ type: "rare" });
    for (let n = 0; n < 300; n++) await audit({ type: "common" });
    const rare = auditQueryInput.parse({ type: "rare" });
    let page = await queryAudit(state, rare, { maxScan: 100 });
    expect(page.entries).toEqual([]);
    expect(page.nextCursor).not.toBeNull();
    let calls = 1;
    while (page.entries.length === 0 && page.nextCursor !== null) {
      page = await queryAudit(state, { ...rare, cursor: page.nextCursor }, { maxScan: 100 });
      calls++;
    }
    expect(page.entries.map((entry) => entry.type)).toEqual(["rare"]);
    expect(calls).toBeGreaterThan(2);
  });

  it("is refused to a realm-bound key and allowed to an admin key", async () => {
    await expect(query({}, realmKey)).rejects.toMatchObject({ code: "forbidden" });
    await expect(query({}, admin)).resolves.toMatchObject({ entries: [] });
  });
});

describe("security::audit_verify", () => {
  it("reports an intact chain as valid", async () => {
    await seed();
    expect(await verify()).toEqual({ valid: true, length: 5, brokenAt: null });
  });

  it("reports the first tampered entry", async () => {
    await seed();
    const key = `${AUDIT_CHAIN.chainId}:00000000000000000002`;
    const stored = await state.get<AuditEntry>(AUDIT_CHAIN.scope, key);
    await state.set(AUDIT_CHAIN.scope, key, { ...stored, agentId: "someone-else" });
    expect(await verify()).toMatchObject({ valid: false, length: 5, brokenAt: 2 });
  });

  it("is refused to a realm-bound key", async () => {
    await expect(verify(realmKey)).rejects.toMatchObject({ code: "forbidden" });
  });
});

describe("security routes", () => {
  it("exposes query and verify over HTTP and subscribes to topic audit", () => {
    const configs = engine.triggers
      .list()
      .filter((trigger) => trigger.function_id.startsWith("security::"))
      .map(({ type, function_id, config }) => ({ type, function_id, config }));
    expect(configs).toEqual(
      expect.arrayContaining([
        {
          type: "http",
          function_id: "security::audit_query",
          config: { api_path: "/api/audit", http_method: "GET" },
        },
        {
          type: "http",
          function_id: "security::audit_verify",
          config: { api_path: "/api/audit/verify", http_method: "GET" },
        },
        { type: "subscribe", function_id: "security::audit_event", config: { topic: "audit" } },
      ]),
    );
    expect(
      configs.some((trigger) => trigger.function_id === "security::audit" && trigger.type === "http"),
    ).toBe(false);
  });
});
