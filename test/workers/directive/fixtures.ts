import { expect } from "vitest";
import type { AppError } from "../../../src/shared/errors.ts";
import { type JsonBody, json, type TestServer } from "../../helpers/server.ts";

/**
 * Control-plane test fixtures (shared by the directive and hierarchy tests). A realm is created
 * through the realm worker when it is there; without it (`POST /api/realms` answers 404) a fixed id
 * stands in, since nothing then checks that realms exist.
 */
export async function createRealm(server: TestServer, name: string): Promise<string> {
  const response = await server.request("/api/realms", { method: "POST", json: { name, owner: "tests" } });
  if (response.status === 404) return `realm-${name}`;
  expect(response.status).toBe(201);
  return (await json(response)).id;
}

export async function createAgent(server: TestServer, realmId: string, name: string): Promise<string> {
  const response = await server.request("/api/agents", { method: "POST", json: { name, realmId } });
  expect(response.status).toBe(201);
  return (await json(response)).id;
}

/** An API key bound to one realm. */
export async function createRealmKey(server: TestServer, realmId: string): Promise<string> {
  const response = await server.request("/api/keys", {
    method: "POST",
    json: { name: "realm key", realmId },
  });
  expect(response.status).toBe(201);
  return (await json(response)).key;
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

/** Status and parsed body of a request (null body for an empty reply). */
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

/** Whether the realm worker is registered (before it is, realms are not checked at all). */
export async function hasRealmWorker(server: TestServer): Promise<boolean> {
  try {
    await server.service.engine.trigger({ function_id: "realm::get", payload: { id: "realm-probe" } });
    return true;
  } catch (error) {
    return (error as AppError).reason !== "function_not_found";
  }
}

/** Archives a realm through the realm worker, which makes it read-only. */
export async function archiveRealm(server: TestServer, realmId: string): Promise<void> {
  const response = await server.request(`/api/realms/${realmId}`, {
    method: "PATCH",
    json: { status: "Archived" },
  });
  expect(response.status).toBe(200);
}
