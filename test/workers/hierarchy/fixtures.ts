import { expect } from "vitest";
import { call, createAgent, newRealm } from "../../helpers/control-plane.ts";
import type { TestServer } from "../../helpers/server.ts";

/** A fresh realm with agents of the given names; returns the realm id and a name → agent id map. */
export async function realmWith(
  server: TestServer,
  ...names: string[]
): Promise<{ realmId: string; ids: Record<string, string> }> {
  const realmId = await newRealm(server);
  const ids: Record<string, string> = {};
  for (const name of names) ids[name] = await createAgent(server, realmId, { name });
  return { realmId, ids };
}

export const setNode = (server: TestServer, body: Record<string, unknown>, key?: string) =>
  call(server, "POST", "/api/hierarchy", body, key);

/** hierarchy::set that must succeed; returns the stored node. */
export async function place(
  server: TestServer,
  realmId: string,
  agentId: string,
  fields: Record<string, unknown> = {},
) {
  const response = await setNode(server, { realmId, agentId, ...fields });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}
