import { expect } from "vitest";
import { type JsonBody, json, type TestServer } from "../../helpers/server.ts";

/** A realm through the realm worker; without one (it lands separately) agents live in the default realm. */
export async function createRealm(server: TestServer, name = "pulse-test"): Promise<string> {
  const response = await server.request("/api/realms", { method: "POST", json: { name, owner: "tester" } });
  if (response.status === 404) return "realm-default";
  expect(response.status).toBeLessThan(300);
  const body = await json(response);
  return body.id ?? body.realmId;
}

/** An agent on the fake OpenAI model (gpt-4o resolves to the OpenAI provider the fake stands in for). */
export async function createAgent(server: TestServer, realmId: string, extra: Record<string, unknown> = {}) {
  const response = await server.request("/api/agents", {
    method: "POST",
    json: { name: "pulsed", model: "gpt-4o", realmId, ...extra },
  });
  expect(response.status).toBe(201);
  return (await json(response)).id as string;
}

export async function setup(server: TestServer): Promise<{ realmId: string; agentId: string }> {
  const realmId = await createRealm(server);
  return { realmId, agentId: await createAgent(server, realmId) };
}

export function registerPulse(server: TestServer, body: Record<string, unknown>): Promise<Response> {
  return server.request("/api/pulse/register", { method: "POST", json: body });
}

export async function registered(server: TestServer, body: Record<string, unknown>): Promise<JsonBody> {
  const response = await registerPulse(server, body);
  expect(response.status).toBe(200);
  return json(response);
}

export async function statusOf(
  server: TestServer,
  realmId: string,
  agentId: string,
  query = "",
): Promise<JsonBody> {
  const response = await server.request(`/api/pulse/${realmId}/${agentId}${query}`);
  expect(response.status).toBe(200);
  return json(response);
}

export function toggle(
  server: TestServer,
  realmId: string,
  agentId: string,
  body: unknown,
): Promise<Response> {
  return server.request(`/api/pulse/${realmId}/${agentId}`, { method: "PATCH", json: body });
}

export function invoke(server: TestServer, body: Record<string, unknown>): Promise<Response> {
  return server.request("/api/pulse/invoke", { method: "POST", json: body });
}

/** The pulse::tick cron triggers currently scheduled on the server for the agent. */
export function pulseTriggers(server: TestServer, agentId: string) {
  return server.service.engine.triggers
    .list()
    .filter(
      (record) =>
        record.function_id === "pulse::tick" &&
        (record.config as { data?: { agentId?: string } }).data?.agentId === agentId,
    );
}

/**
 * Puts the agent over its budget: through the real ledger when it is there (a one-cent budget, then a
 * one-cent spend), else through a probe ledger::check that refuses.
 */
export async function exhaustBudget(server: TestServer, realmId: string, agentId: string): Promise<void> {
  if (!server.service.engine.functions.get("ledger::check")) {
    server.service.engine
      .worker("probe")
      .registerFunction({ id: "ledger::check" }, () => ({ allowed: false }));
    return;
  }
  const budget = await server.request("/api/ledger/budget", {
    method: "POST",
    json: { realmId, agentId, monthlyCents: 1 },
  });
  expect(budget.status).toBeLessThan(300);
  const spend = await server.request("/api/ledger/spend", {
    method: "POST",
    json: { realmId, agentId, costCents: 1, provider: "x", model: "y", inputTokens: 1, outputTokens: 1 },
  });
  expect(spend.status).toBeLessThan(300);
}

/** The system prompt of a chat request the fake model received. */
export function systemPromptOf(request: Record<string, unknown>): string {
  const messages = request.messages as Array<{ role: string; content: unknown }>;
  const system = messages.find((message) => message.role === "system");
  return typeof system?.content === "string" ? system.content : JSON.stringify(system?.content ?? "");
}
