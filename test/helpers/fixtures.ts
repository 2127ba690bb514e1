import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import { call, createAgent, newRealm, realmKey } from "./control-plane.ts";
import type { JsonBody, TestServer } from "./server.ts";

/** A pulse that fires once a year (midnight, January 1st): never during a test. */
const NEVER = "0 0 0 1 1 *";

/**
 * One realm holding a resource of every kind, created through the HTTP API with the admin key, each
 * marked with `marker` (a random string nobody else knows): whatever answers with the marker answered
 * with this realm's data.
 */
export interface RealmFixture {
  realmId: string;
  key: string;
  keyId: string;
  marker: string;
  agentId: string;
  sessionId: string;
  directiveId: string;
  workflowId: string;
  runId: string;
  missionId: string;
  proposalId: string;
  swarmId: string;
  /** Every id above, for path parameters and bodies. */
  ids: Record<string, string>;
}

async function ok(server: TestServer, method: string, path: string, body?: unknown): Promise<JsonBody> {
  const response = await call(server, method, path, body);
  expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBeLessThan(300);
  return response.body;
}

/**
 * Creates the realm and its resources: an agent on the fake model with a session, messages and memories;
 * a directive; budgets and a spend; a pulse; an org chart node (a council member); a workflow with a run;
 * a mission with a comment; a council proposal; a knowledge-graph entity named by the marker; a swarm with a message;
 * a Slack channel bound to the agent; a realm-bound key.
 * The server's model must answer (see serverWithFakeModel).
 */
export async function createRealmFixture(
  server: TestServer,
  name: string,
  options: { realmId?: string } = {},
): Promise<RealmFixture> {
  const marker = `marker-${name}-${randomUUID()}`;
  // An existing realm (the admin's realm-default, say) gets the resources without being created.
  const realmId = options.realmId ?? (await newRealm(server, `${name} ${marker}`));
  const agentId = await createAgent(server, realmId, { name: `agent ${marker}`, systemPrompt: marker });
  const message = await ok(server, "POST", `/api/agents/${agentId}/message`, {
    message: `remember ${marker}`,
  });
  const directive = await ok(server, "POST", "/api/directives", { realmId, title: marker, level: "realm" });
  await ok(server, "POST", "/api/ledger/budget", { realmId, monthlyCents: 100_000 });
  await ok(server, "POST", "/api/ledger/budget", { realmId, agentId, monthlyCents: 50_000 });
  await ok(server, "POST", "/api/ledger/spend", {
    realmId,
    agentId,
    costCents: 1,
    provider: "openai",
    model: "gpt-4o",
    inputTokens: 1,
    outputTokens: 1,
    billingCode: marker,
  });
  await ok(server, "POST", "/api/pulse/register", { realmId, agentId, cron: NEVER });
  await ok(server, "POST", "/api/hierarchy", { realmId, agentId, title: marker, capabilities: ["council"] });
  const workflow = await ok(server, "POST", "/api/workflows", {
    realmId,
    name: marker,
    steps: [{ name: "recall", functionId: "memory::recall", promptTemplate: marker }],
  });
  // The step fails (recall gets no query): a failed run is a run record all the same.
  await call(server, "POST", "/api/workflows/run", {
    workflowId: workflow.id,
    realmId,
    agentId,
    input: marker,
  });
  const runs = await ok(server, "GET", `/api/workflows/${workflow.id}/runs?realmId=${realmId}`);
  const mission = await ok(server, "POST", "/api/missions", { realmId, title: marker, createdBy: agentId });
  await ok(server, "POST", `/api/missions/${realmId}/${mission.id}/comments`, {
    authorId: agentId,
    body: marker,
  });
  const proposal = await ok(server, "POST", "/api/council/proposals", {
    realmId,
    kind: "custom",
    title: marker,
    requestedBy: agentId,
  });
  await ok(server, "POST", "/api/kg/add", {
    agentId,
    entity: marker,
    type: "secret",
    relations: [{ target: `${marker}-target`, type: "knows" }],
  });
  const swarm = await ok(server, "POST", "/api/swarm/create", { realmId, goal: marker, agentIds: [agentId] });
  await ok(server, "POST", `/api/swarm/${swarm.swarmId}/broadcast`, {
    agentId,
    type: "observation",
    message: marker,
  });
  await ok(server, "POST", "/api/channels", { platform: "slack", channelId: marker, agentId });
  const key = await realmKey(server, realmId);
  const keys = await ok(server, "GET", "/api/keys");
  const keyId = keys.keys.find((entry: JsonBody) => entry.realmId === realmId)?.id;
  const ids = {
    realmId,
    agentId,
    sessionId: message.sessionId,
    directiveId: directive.id,
    workflowId: workflow.id,
    runId: runs.runs[0]?.runId,
    missionId: mission.id,
    proposalId: proposal.id,
    swarmId: swarm.swarmId,
    platform: "slack",
    channelId: marker,
    keyId,
  };
  return { ...ids, key, keyId, marker, ids } as RealmFixture;
}

/** Scopes that change whatever anyone does (counters, logs): not a realm's data. */
const VOLATILE_SCOPES = [
  "audit", // the audit log records refusals too: it is meant to grow
  "rate_limit", // request counters of the caller's own key
  "auth_", // key cache epochs and the keys of the caller
];

/**
 * Every stored record that belongs to the fixture's realm: in a scope named after it, or whose value
 * says it is the realm's, or keyed by one of its ids. A request of another realm must leave all of
 * them exactly as they were.
 */
export async function snapshotRealm(server: TestServer, fixture: RealmFixture): Promise<Map<string, string>> {
  const engine = server.service.engine;
  const { groups } = (await engine.trigger({ function_id: "state::list_groups", payload: {} })) as {
    groups: string[];
  };
  const ids = Object.values(fixture.ids).filter(Boolean);
  const records = new Map<string, string>();
  for (const scope of groups) {
    if (VOLATILE_SCOPES.some((prefix) => scope.startsWith(prefix))) continue;
    let cursor: string | undefined;
    do {
      const page = (await engine.trigger({
        function_id: "state::list",
        payload: { scope, limit: 1000, ...(cursor ? { cursor } : {}) },
      })) as { items: Array<{ key: string; value: unknown }>; nextCursor: string | null };
      for (const item of page.items) {
        const text = JSON.stringify(item.value);
        const mine =
          scope.includes(fixture.realmId) ||
          (item.value as { realmId?: unknown } | null)?.realmId === fixture.realmId ||
          ids.some((id) => scope.includes(id) || item.key.includes(id)) ||
          text.includes(fixture.marker);
        if (mine) records.set(`${scope}\u0000${item.key}`, text);
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }
  return records;
}

/** The records that differ between two snapshots (added, removed or changed). */
export function changedRecords(before: Map<string, string>, after: Map<string, string>): string[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys]
    .filter((key) => before.get(key) !== after.get(key))
    .map((key) => key.replace("\u0000", " / "));
}
