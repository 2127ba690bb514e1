import { expect } from "vitest";
import { type JsonBody, json, type TestServer } from "./server.ts";

/**
 * Control-plane fixtures shared by the realm, directive, hierarchy, ledger, pulse and agents tests:
 * realms, agents and realm-bound keys made over HTTP with the admin key, compact requests, and a
 * recorder for a topic.
 */

/** A realm created over HTTP (201); returns the realm object. `fields` override the name and owner. */
export async function createRealm(
  server: TestServer,
  fields: Record<string, unknown> = {},
): Promise<JsonBody> {
  const response = await server.request("/api/realms", {
    method: "POST",
    json: { name: "Acme", owner: "ops@acme.test", ...fields },
  });
  expect(response.status, await response.clone().text()).toBe(201);
  return json(response);
}

/** The id of a new realm. */
export async function newRealm(server: TestServer, name?: string): Promise<string> {
  return (await createRealm(server, name === undefined ? {} : { name })).id;
}

/**
 * The id of a new agent of `realmId`, on the fake OpenAI model unless `fields` say otherwise
 * (`model: undefined` lets the realm's default model apply).
 */
export async function createAgent(
  server: TestServer,
  realmId: string,
  fields: Record<string, unknown> = {},
): Promise<string> {
  const response = await server.request("/api/agents", {
    method: "POST",
    // Names are unique per realm: each agent gets its own unless `fields` name it.
    json: { name: `agent-${++agentCount}`, model: "gpt-4o", realmId, ...fields },
  });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await json(response)).id;
}

let agentCount = 0;

/** A new API key bound to `realmId`. */
export async function realmKey(server: TestServer, realmId: string): Promise<string> {
  const response = await server.request("/api/keys", {
    method: "POST",
    json: { name: "realm key", realmId },
  });
  expect(response.status).toBe(201);
  return (await json(response)).key;
}

/**
 * A hard budget of one cent (the realm's, or the agent's when `agentId` is given), spent in full: every
 * ledger check then refuses. A zero budget would refuse nothing (the specification's alert table).
 */
export async function spentBudget(server: TestServer, realmId: string, agentId?: string): Promise<void> {
  const budget = await call(server, "POST", "/api/ledger/budget", {
    realmId,
    ...(agentId === undefined ? {} : { agentId }),
    monthlyCents: 1,
    hardLimit: true,
  });
  expect(budget.status).toBe(200);
  const spend = await call(server, "POST", "/api/ledger/spend", {
    realmId,
    agentId: agentId ?? "someone-else",
    costCents: 1,
    provider: "openai",
    model: "gpt-4o",
    inputTokens: 1,
    outputTokens: 1,
  });
  expect(spend.status).toBe(201);
}

/** Archives a realm, which makes it read-only. */
export async function archiveRealm(server: TestServer, realmId: string): Promise<void> {
  const response = await server.request(`/api/realms/${realmId}`, {
    method: "PATCH",
    json: { status: "Archived" },
  });
  expect(response.status).toBe(200);
}

/** Status and parsed body of one request (null body for an empty reply), for compact assertions. */
export async function call(
  server: TestServer,
  method: string,
  path: string,
  body?: unknown,
  key?: string,
): Promise<{ status: number; body: JsonBody }> {
  const response = await server.request(path, {
    method,
    ...(body === undefined ? {} : { json: body }),
    ...(key === undefined ? {} : { key }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

let recorders = 0;

/** Every message published on `topic` from now on, in arrival order. */
export function recordTopic(server: TestServer, topic: string): JsonBody[] {
  const events: JsonBody[] = [];
  const id = `test::record_${++recorders}`;
  server.service.engine.worker("test").registerFunction({ id }, (data) => {
    events.push(data);
  });
  server.service.engine.registerTrigger("test", { type: "subscribe", function_id: id, config: { topic } });
  return events;
}

/**
 * Puts a realm in the state a running realm::delete leaves it in (`deleting: true` on its record), as
 * if the delete were still purging: for tests of what other workers do meanwhile.
 */
export async function markRealmDeleting(server: TestServer, realmId: string): Promise<void> {
  const trigger = server.service.engine.trigger.bind(server.service.engine);
  const realm = await trigger({ function_id: "state::get", payload: { scope: "realms", key: realmId } });
  expect(realm).not.toBeNull();
  await trigger({
    function_id: "state::set",
    payload: { scope: "realms", key: realmId, value: { ...(realm as object), deleting: true } },
  });
}
