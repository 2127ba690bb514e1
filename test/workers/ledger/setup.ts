import { afterEach, beforeEach, expect } from "vitest";
import { setClock } from "../../../src/shared/clock.ts";
import { createAgent, newRealm } from "../../helpers/control-plane.ts";
import { type JsonBody, json, startTestServer, type TestServer } from "../../helpers/server.ts";

/** What the probe functions of a test saw: ledger.alert messages and council::activity calls. */
export interface Probes {
  alerts: JsonBody[];
  activity: JsonBody[];
}

/**
 * A fresh server per test, with probes on `ledger.alert` and around `council::activity` (what the
 * ledger tells the council), and the clock restored afterwards.
 */
export function ledgerServer(): { readonly server: TestServer; readonly probes: Probes } {
  let current: TestServer | undefined;
  let probes: Probes = { alerts: [], activity: [] };
  beforeEach(async () => {
    current = await startTestServer();
    const seen: Probes = { alerts: [], activity: [] };
    probes = seen;
    const probe = current.service.engine.worker("probe");
    probe.registerFunction({ id: "probe::alert" }, (data) => {
      seen.alerts.push(data);
      return null;
    });
    probe.registerTrigger({
      type: "subscribe",
      function_id: "probe::alert",
      config: { topic: "ledger.alert" },
    });
    // The council's own function stays in charge; the probe only watches what reaches it.
    const council = current.service.engine.functions.get("council::activity");
    if (council) current.service.engine.unregisterFunction("council::activity");
    probe.registerFunction({ id: "council::activity", input: council?.input }, (data, invocation) => {
      seen.activity.push(data);
      return council ? council.handler(data, invocation) : { recorded: true };
    });
  });
  afterEach(async () => {
    setClock(null);
    await current?.close();
    current = undefined;
  });
  return {
    get server() {
      if (!current) throw new Error("ledgerServer: no server outside a test");
      return current;
    },
    get probes() {
      return probes;
    },
  };
}

export async function setBudget(server: TestServer, body: Record<string, unknown>): Promise<JsonBody> {
  const response = await server.request("/api/ledger/budget", { method: "POST", json: body });
  expect(response.status, JSON.stringify(await response.clone().json())).toBe(200);
  return json(response);
}

export const spendOf = (realmId: string, agentId: string, costCents: number, extra = {}) => ({
  realmId,
  agentId,
  costCents,
  provider: "openai",
  model: "gpt-4o",
  inputTokens: 100,
  outputTokens: 20,
  ...extra,
});

export function postSpend(server: TestServer, body: Record<string, unknown>): Promise<Response> {
  return server.request("/api/ledger/spend", { method: "POST", json: body });
}

export async function check(server: TestServer, realmId: string, agentId: string): Promise<JsonBody> {
  const response = await server.request(`/api/ledger/check/${realmId}/${agentId}`);
  expect(response.status).toBe(200);
  return json(response);
}

/** A realm with one agent, the usual start of a ledger test. */
export async function realmWithAgent(server: TestServer): Promise<{ realmId: string; agentId: string }> {
  const realmId = await newRealm(server);
  return { realmId, agentId: await createAgent(server, realmId) };
}
