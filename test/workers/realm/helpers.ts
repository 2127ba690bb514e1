import { expect } from "vitest";
import { type JsonBody, json, type TestServer } from "../../helpers/server.ts";

/** A realm created over HTTP with the admin key; returns the realm object. */
export async function createRealm(server: TestServer, body: Record<string, unknown> = {}): Promise<JsonBody> {
  const response = await server.request("/api/realms", {
    method: "POST",
    json: { name: "Acme", owner: "ops@acme.test", ...body },
  });
  expect(response.status).toBe(201);
  return json(response);
}

/** A new API key bound to `realmId`. */
export async function realmKey(server: TestServer, realmId: string): Promise<string> {
  const response = await server.request("/api/keys", { method: "POST", json: { name: "tenant", realmId } });
  expect(response.status).toBe(201);
  return (await json(response)).key;
}

export async function createAgent(server: TestServer, body: Record<string, unknown>): Promise<string> {
  const response = await server.request("/api/agents", {
    method: "POST",
    json: { model: "gpt-4o", ...body },
  });
  expect(response.status, JSON.stringify(await response.clone().json())).toBe(201);
  return (await json(response)).id;
}

/** Status and body of one request, for compact assertions. */
export async function call(
  server: TestServer,
  method: string,
  path: string,
  body?: unknown,
  key?: string,
): Promise<{ status: number; body: JsonBody }> {
  const response = await server.request(path, { method, json: body, ...(key ? { key } : {}) });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** Data published on `topic`, collected by a probe subscriber. */
export function subscribe(server: TestServer, topic: string): Array<Record<string, unknown>> {
  const events: Array<Record<string, unknown>> = [];
  const id = `probe::${topic.replace(/\W/g, "_")}`;
  server.service.engine.worker("probe").registerFunction({ id }, (data) => {
    events.push(data as Record<string, unknown>);
  });
  server.service.engine.registerTrigger("probe", { type: "subscribe", function_id: id, config: { topic } });
  return events;
}
