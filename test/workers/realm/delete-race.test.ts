import { describe, expect, it } from "vitest";
import { call, createAgent, newRealm } from "../../helpers/control-plane.ts";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";
import { holdCalls, recordsMentioning, until } from "../../helpers/races.ts";
import type { TestServer } from "../../helpers/server.ts";

/**
 * A write whose realm (or agent) check passed just before realm::delete set its marker, and which writes
 * after the delete's purges ran: the interleaving is made by holding realm::get's (or agent::get's)
 * answers, read when asked, until the delete has finished. Whatever the write answers, nothing of the
 * realm may stay.
 */
const ctx = serverWithFakeModel();

/** Holds `functionId`'s answers about `id` (read when asked, the delete's own admin reads let through). */
const holdAnswers = (server: TestServer, functionId: string, id: string) =>
  holdCalls(server, functionId, (input, context) => input.id === id && context.auth.kind !== "admin", {
    after: true,
  });

interface Made {
  realmId: string;
  agentId: string;
  workflowId: string;
  missionId: string;
  swarmId: string;
}

const NEVER = "0 0 0 1 1 *";
const spend = { costCents: 1, provider: "openai", model: "gpt-4o", inputTokens: 1, outputTokens: 1 };

const WRITES: Record<string, (made: Made) => [string, string, unknown]> = {
  "swarm::create": ({ realmId, agentId }) => [
    "POST",
    "/api/swarm/create",
    { realmId, goal: "g", agentIds: [agentId] },
  ],
  "kg::add_temporal": ({ agentId }) => ["POST", "/api/kg/add", { agentId, entity: "e", type: "t" }],
  "channel::bind": ({ realmId, agentId }) => [
    "POST",
    "/api/channels",
    { platform: "slack", channelId: `C-${realmId}`, agentId },
  ],
  "swarm::broadcast": ({ agentId, swarmId }) => [
    "POST",
    `/api/swarm/${swarmId}/broadcast`,
    { agentId, type: "observation", message: "m" },
  ],
  "pulse::register": ({ realmId, agentId }) => [
    "POST",
    "/api/pulse/register",
    { realmId, agentId, cron: NEVER },
  ],
  "mission::create": ({ realmId, agentId }) => [
    "POST",
    "/api/missions",
    { realmId, title: "m", createdBy: agentId },
  ],
  "mission::comment": ({ realmId, agentId, missionId }) => [
    "POST",
    `/api/missions/${realmId}/${missionId}/comments`,
    { authorId: agentId, body: "c" },
  ],
  "directive::create": ({ realmId }) => ["POST", "/api/directives", { realmId, title: "d", level: "realm" }],
  "ledger::set_budget": ({ realmId, agentId }) => [
    "POST",
    "/api/ledger/budget",
    { realmId, agentId, monthlyCents: 5 },
  ],
  "hierarchy::set": ({ realmId, agentId }) => ["POST", "/api/hierarchy", { realmId, agentId, title: "t" }],
  "ledger::spend": ({ realmId, agentId }) => ["POST", "/api/ledger/spend", { realmId, agentId, ...spend }],
  "council::submit": ({ realmId, agentId }) => [
    "POST",
    "/api/council/proposals",
    { realmId, kind: "custom", title: "p", requestedBy: agentId },
  ],
  "council::record": ({ realmId, agentId }) => [
    "POST",
    "/api/council/activity",
    { realmId, actorKind: "agent", actorId: agentId, action: "a", entityType: "e", entityId: "x" },
  ],
  "workflow::create": ({ realmId }) => [
    "POST",
    "/api/workflows",
    { realmId, name: "w", steps: [{ name: "s", functionId: "memory::recall" }] },
  ],
  "workflow::run": ({ realmId, agentId, workflowId }) => [
    "POST",
    "/api/workflows/run",
    { workflowId, realmId, agentId, input: "x", async: true },
  ],
  "auth::keys::create": ({ realmId }) => ["POST", "/api/keys", { name: "k", realmId }],
  "agent::create": ({ realmId }) => ["POST", "/api/agents", { realmId, name: "late", model: "gpt-4o" }],
};

async function made(server: TestServer): Promise<Made> {
  const realmId = await newRealm(server);
  const agentId = await createAgent(server, realmId);
  const steps = [{ name: "s", functionId: "memory::recall" }];
  const workflow = await call(server, "POST", "/api/workflows", { realmId, name: "w0", steps });
  const mission = await call(server, "POST", "/api/missions", { realmId, title: "m0", createdBy: agentId });
  const swarm = await call(server, "POST", "/api/swarm/create", { realmId, goal: "g", agentIds: [agentId] });
  return {
    realmId,
    agentId,
    workflowId: workflow.body.id,
    missionId: mission.body.id,
    swarmId: swarm.body.swarmId,
  };
}

/** Writes that look their agent up after their realm: the agent's answer is the one held. */
const AGENT_CHECKED = [
  "pulse::register",
  "kg::add_temporal",
  "channel::bind",
  "swarm::create",
  "mission::create",
  "ledger::set_budget",
  "hierarchy::set",
];
async function raceDelete(name: string, held: "realm::get" | "agent::get"): Promise<void> {
  const { server } = ctx;
  const ids = await made(server);
  const hold = holdAnswers(server, held, held === "realm::get" ? ids.realmId : ids.agentId);
  const write = WRITES[name];
  if (!write) throw new Error(`no write ${name}`);
  const [method, path, body] = write(ids);
  const pending = call(server, method, path, body);
  // A write that never reads what is held is done before the delete starts.
  let settled = false;
  void pending.finally(() => {
    settled = true;
  });
  await until(() => hold.held() > 0 || settled);
  const checked = hold.held() > 0;
  expect((await call(server, "DELETE", `/api/realms/${ids.realmId}`)).body).toEqual({ deleted: true });
  hold.release();
  const answer = await pending;
  if (checked) expect([404, 409], JSON.stringify(answer)).toContain(answer.status);
  expect(await recordsMentioning(server, [ids.realmId, ids.agentId])).toEqual([]);
}

describe("a write that read its realm just before the realm's delete", () => {
  for (const name of Object.keys(WRITES)) {
    it(`${name} leaves nothing of the deleted realm`, () => raceDelete(name, "realm::get"));
  }
});

describe("a write that read its agent just before the realm's delete", () => {
  for (const name of AGENT_CHECKED) {
    it(`${name} leaves nothing of the deleted realm`, () => raceDelete(name, "agent::get"));
  }
});

/**
 * The same for an agent delete: a write that checked its agent just before agent::delete marked it, and
 * wrote after the whole delete (so the agent reads as unknown, not as deleting): what it attached to the
 * agent goes, and it fails.
 */
const AGENT_PURGED = ["pulse::register", "hierarchy::set", "ledger::set_budget", "mission::checkout"];
WRITES["mission::checkout"] = ({ realmId, agentId, missionId }) => [
  "POST",
  `/api/missions/${realmId}/${missionId}/checkout`,
  { agentId },
];

describe("a write that read its agent just before the agent's delete", () => {
  for (const name of AGENT_PURGED) {
    it(`${name} leaves nothing of the deleted agent`, async () => {
      const { server } = ctx;
      const ids = await made(server);
      // The mission is another agent's, so that only the checkout names the deleted one.
      const other = await createAgent(server, ids.realmId);
      const mission = await call(server, "POST", "/api/missions", {
        realmId: ids.realmId,
        title: "m1",
        createdBy: other,
      });
      const hold = holdAnswers(server, "agent::get", ids.agentId);
      const write = WRITES[name];
      if (!write) throw new Error(`no write ${name}`);
      const [method, path, body] = write({ ...ids, missionId: mission.body.id });
      const pending = call(server, method, path, body);
      await until(() => hold.held() > 0);
      expect((await call(server, "DELETE", `/api/agents/${ids.agentId}`)).status).toBe(204);
      hold.release();
      expect((await pending).status).toBe(404);
      const left = await recordsMentioning(server, [ids.agentId]);
      // The agent's first swarm and mission name it as a member and creator: they stay by design.
      expect(
        left.filter((record) => !record.includes(ids.swarmId) && !record.includes(ids.missionId)),
      ).toEqual([]);
    });
  }
});
