import { expect } from "vitest";
import { createAgent, newRealm } from "../../helpers/control-plane.ts";
import { type JsonBody, json, type TestServer } from "../../helpers/server.ts";

/** A realm with one agent on the fake OpenAI model, the usual start of a pulse test. */
export async function setup(server: TestServer): Promise<{ realmId: string; agentId: string }> {
  const realmId = await newRealm(server, "pulse-test");
  return { realmId, agentId: await createAgent(server, realmId, { name: "pulsed" }) };
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

/** Puts the agent over its budget through the ledger: a one-cent budget, then a one-cent spend. */
export async function exhaustBudget(server: TestServer, realmId: string, agentId: string): Promise<void> {
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
