import type { ServeProcess } from "../helpers/process.ts";
import type { JsonBody } from "../helpers/server.ts";

/**
 * The crash matrix's domains (issue #22): each acknowledges writes over HTTP and says how to find them
 * again after a kill -9. Adding a domain (missions, council, KG, swarms, channel deliveries…) is one
 * entry: `write` returns the id of what the service acknowledged (null when it refused or failed),
 * `verify` returns what is missing or duplicated among the acknowledged ids.
 */
export interface CrashDomain {
  name: string;
  /** Run once on the first start, before any load (the agent messages go to, say). */
  setup?(client: Client): Promise<void>;
  write(client: Client, i: number): Promise<string | null>;
  verify(client: Client, acked: string[]): Promise<string[]>;
}

export interface Client {
  server: ServeProcess;
  key: string;
  /** Per-domain memory that survives restarts (ids made in setup). */
  shared: Record<string, string>;
}

export const REALM = "realm-default";
/** What one reply of the fake model costs on gpt-4o: 12 tokens in at $2.50, 5 out at $10 per million. */
const FAKE_REPLY_CENTS = 0.008;

export async function send(
  client: Client,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: JsonBody }> {
  const response = await client.server.request(path, {
    method,
    key: client.key,
    ...(body === undefined ? {} : { json: body }),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/** The id of a 2xx answer's `field`, or null. */
async function acked(
  client: Client,
  method: string,
  path: string,
  body: unknown,
  field = "id",
): Promise<string | null> {
  const { status, body: answer } = await send(client, method, path, body);
  return status < 300 && answer && typeof answer[field] === "string" ? answer[field] : null;
}

/** Every item of a paginated list (object lists with nextCursor). */
async function listAll(client: Client, path: string, field: string): Promise<JsonBody[]> {
  const items: JsonBody[] = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes("?") ? "&" : "?";
    const { body } = await send(
      client,
      "GET",
      `${path}${separator}limit=500${cursor ? `&cursor=${cursor}` : ""}`,
    );
    items.push(...(body?.[field] ?? []));
    cursor = body?.nextCursor ?? null;
  } while (cursor);
  return items;
}

/** Acknowledged ids not among `found`, and ids found more than once. */
function missingOrDoubled(acknowledged: string[], found: string[]): string[] {
  const counts = new Map<string, number>();
  for (const id of found) counts.set(id, (counts.get(id) ?? 0) + 1);
  return acknowledged.flatMap((id) => {
    const n = counts.get(id) ?? 0;
    return n === 1 ? [] : [`${id} found ${n} times`];
  });
}

async function eachStatus(
  client: Client,
  acknowledged: string[],
  path: (id: string) => string,
): Promise<string[]> {
  const problems: string[] = [];
  for (const id of acknowledged) {
    const { status } = await send(client, "GET", path(id));
    if (status !== 200) problems.push(`${id}: GET ${path(id)} answered ${status}`);
  }
  return problems;
}

export const DOMAINS: CrashDomain[] = [
  {
    name: "agents",
    write: (client, i) => acked(client, "POST", "/api/agents", { name: `crash-agent-${i}`, model: "gpt-4o" }),
    verify: async (client, ids) =>
      missingOrDoubled(
        ids,
        (await listAll(client, "/api/agents", "agents")).map((agent) => agent.id),
      ),
  },
  {
    name: "sessions, messages and memories",
    async setup(client) {
      const id = await acked(client, "POST", "/api/agents", { name: "crash-talker", model: "gpt-4o" });
      if (!id) throw new Error("crash matrix: could not create the talking agent");
      client.shared.talker = id;
    },
    write: async (client, i) => {
      const path = `/api/agents/${client.shared.talker}/message`;
      const sessionId = await acked(client, "POST", path, { message: `note ${i}` }, "sessionId");
      return sessionId ? `${sessionId}|${i}` : null;
    },
    verify: async (client, acknowledged) => {
      const talker = client.shared.talker;
      const sessions = await listAll(client, `/api/agents/${talker}/sessions`, "sessions");
      const ids = acknowledged.map((entry) => entry.split("|")[0] ?? "");
      const problems = missingOrDoubled(
        ids,
        sessions.map((session) => session.id),
      );
      for (const session of sessions) {
        if (ids.includes(session.id) && session.messageCount < 2) {
          problems.push(`${session.id}: ${session.messageCount} messages stored for an answered message`);
        }
      }
      // The message's own number finds the memory the turn stored before it answered.
      for (const entry of acknowledged) {
        const [sessionId, i] = entry.split("|");
        const { body } = await send(client, "POST", `/api/agents/${talker}/memory`, { query: i, limit: 5 });
        const found = (body?.results ?? []).some(
          (hit: JsonBody) => hit.sessionId === sessionId && hit.content === `note ${i}`,
        );
        if (!found) problems.push(`${sessionId}: the memory of "note ${i}" is missing`);
      }
      // And its cost, recorded with them before the answer went out (one fake reply costs 0.008 cents).
      const ledger = (await send(client, "GET", `/api/ledger/summary/${REALM}?groupBy=agent`)).body;
      const cents = Number(ledger?.breakdown?.[talker] ?? 0);
      if (cents < acknowledged.length * FAKE_REPLY_CENTS - 1e-6) {
        problems.push(`${acknowledged.length} turns answered, ${cents} cents of their costs counted`);
      }
      return problems;
    },
  },
  {
    name: "ledger spends",
    write: async (client, i) => {
      const eventId = `crash-spend-${Date.now()}-${i}`;
      const spend = { realmId: REALM, agentId: "crash-spender", costCents: 1, provider: "p", model: "m" };
      const { status } = await send(client, "POST", "/api/ledger/spend", {
        ...spend,
        inputTokens: 1,
        outputTokens: 1,
        eventId,
      });
      return status === 201 ? eventId : null;
    },
    verify: async (client, ids) => {
      // Delivered again, every acknowledged spend must be found counted already: the total stays.
      const before = (await send(client, "GET", `/api/ledger/summary/${REALM}?groupBy=agent`)).body;
      const problems: string[] = [];
      for (const eventId of ids) {
        const spend = { realmId: REALM, agentId: "crash-spender", costCents: 1, provider: "p", model: "m" };
        const { status } = await send(client, "POST", "/api/ledger/spend", {
          ...spend,
          inputTokens: 1,
          outputTokens: 1,
          eventId,
        });
        if (status !== 201) problems.push(`${eventId}: redelivery answered ${status}`);
      }
      const after = (await send(client, "GET", `/api/ledger/summary/${REALM}?groupBy=agent`)).body;
      if (after.eventCount !== before.eventCount) {
        problems.push(
          `redelivering ${ids.length} acknowledged spends counted ${after.eventCount - before.eventCount} again`,
        );
      }
      if ((after.breakdown?.["crash-spender"] ?? 0) < ids.length) {
        problems.push(
          `${ids.length} spends acknowledged, ${after.breakdown?.["crash-spender"] ?? 0} cents counted`,
        );
      }
      return problems;
    },
  },
  {
    name: "ledger budgets",
    // Each write sets the budget of an agent of its own: concurrent writers of one budget may land in
    // either order, so only a budget nobody else writes has one right answer.
    write: async (client, i) => {
      const agentId = await acked(client, "POST", "/api/agents", {
        name: `crash-budgeted-${i}`,
        model: "gpt-4o",
      });
      if (!agentId) return null;
      const body = { realmId: REALM, agentId, monthlyCents: i + 1 };
      const { status } = await send(client, "POST", "/api/ledger/budget", body);
      return status === 200 ? `${agentId}:${i + 1}` : null;
    },
    verify: async (client, ids) => {
      const problems: string[] = [];
      for (const id of ids) {
        const [agentId = "", cents] = id.split(":");
        const { body } = await send(client, "GET", `/api/ledger/check/${REALM}/${agentId}`);
        if (body?.scope !== "agent" || body?.limitCents !== Number(cents)) {
          problems.push(`${agentId}: acknowledged a limit of ${cents}, found ${JSON.stringify(body)}`);
        }
      }
      return problems;
    },
  },
  {
    name: "directives",
    write: (client, i) =>
      acked(client, "POST", "/api/directives", { realmId: REALM, title: `crash ${i}`, level: "realm" }),
    verify: async (client, ids) =>
      missingOrDoubled(
        ids,
        (await listAll(client, `/api/directives/${REALM}`, "directives")).map((entry) => entry.id),
      ),
  },
  {
    name: "knowledge graph",
    setup: async (client) => {
      const id = await acked(client, "POST", "/api/agents", { name: "crash-grapher", model: "gpt-4o" });
      if (id) client.shared.grapher = id;
    },
    write: (client, i) =>
      acked(
        client,
        "POST",
        "/api/kg/add",
        {
          agentId: client.shared.grapher,
          entity: `crash-${i}`,
          type: "t",
          relations: [{ target: "hub", type: "r" }],
        },
        "entity",
      ),
    verify: async (client, entities) => {
      const problems: string[] = [];
      for (const entity of entities) {
        const { body } = await send(client, "POST", "/api/kg/query", {
          agentId: client.shared.grapher,
          entity,
          depth: 0,
        });
        if (!Array.isArray(body) || body.length !== 1) problems.push(`${entity}: ${JSON.stringify(body)}`);
      }
      return problems;
    },
  },
  {
    name: "swarm messages",
    setup: async (client) => {
      const { body } = await send(client, "POST", "/api/swarm/create", {
        goal: "survive",
        agentIds: ["crash-member"],
        maxDurationMs: 3_600_000,
      });
      client.shared.swarm = body?.swarmId;
    },
    write: async (client, i) => {
      const { status, body } = await send(client, "POST", `/api/swarm/${client.shared.swarm}/broadcast`, {
        agentId: "crash-member",
        type: "observation",
        message: `note ${i}`,
      });
      return status < 300 && typeof body?.seq === "number" ? `note ${i}` : null;
    },
    verify: async (client, notes) => {
      const { body } = await send(client, "GET", `/api/swarm/${client.shared.swarm}/collect`);
      const messages = (body?.observations ?? []) as Array<{ message: string; seq: number }>;
      const seqs = messages.map((m) => m.seq);
      const gaps = seqs.some((seq, index) => seq !== index + 1)
        ? [`message numbers not consecutive: ${seqs.join(",")}`]
        : [];
      return [
        ...gaps,
        ...missingOrDoubled(
          notes,
          messages.map((m) => m.message),
        ),
      ];
    },
  },
  {
    name: "mission checkouts",
    // Each write creates a mission and checks it out; an acknowledged checkout must be stored as active.
    write: async (client, i) => {
      const id = await acked(client, "POST", "/api/missions", {
        realmId: REALM,
        title: `crash ${i}`,
        createdBy: "x",
      });
      if (!id) return null;
      const taken = await acked(client, "POST", `/api/missions/${REALM}/${id}/checkout`, {
        agentId: `crash-${i}`,
      });
      return taken;
    },
    verify: async (client, ids) => {
      const problems: string[] = [];
      for (const id of ids) {
        const { status, body } = await send(client, "GET", `/api/missions/${REALM}/${id}`);
        if (status !== 200 || body?.status !== "active") problems.push(`${id}: ${status} ${body?.status}`);
      }
      return problems;
    },
  },
  {
    name: "council activity",
    write: (client, i) =>
      acked(
        client,
        "POST",
        "/api/council/activity",
        {
          realmId: REALM,
          actorKind: "human",
          actorId: "crash",
          action: `crash_${i}`,
          entityType: "x",
          entityId: "y",
        },
        "hash",
      ),
    verify: async (client, hashes) => {
      const { body } = await send(client, "GET", `/api/council/verify/${REALM}`);
      const problems = body?.valid ? [] : [`chain broken: ${JSON.stringify(body)}`];
      const entries = await listAll(client, `/api/council/log/${REALM}`, "entries");
      return [
        ...problems,
        ...missingOrDoubled(
          hashes,
          entries.map((entry) => entry.hash),
        ),
      ];
    },
  },
  {
    name: "workflows",
    write: (client, i) =>
      acked(client, "POST", "/api/workflows", {
        id: `crash-wf-${Date.now()}-${i}`,
        name: "crash",
        steps: [{ name: "s", functionId: "memory::recall" }],
      }),
    verify: (client, ids) => eachStatus(client, ids, (id) => `/api/workflows/${id}`),
  },
  {
    name: "workflow runs",
    async setup(client) {
      const agentId = await acked(client, "POST", "/api/agents", { name: "crash-runner", model: "gpt-4o" });
      if (!agentId) throw new Error("crash matrix: could not create the runner agent");
      client.shared.runner = agentId;
      // One step that fails (recall gets no query): a run is a checkpointed record either way.
      const steps = [{ name: "recall", functionId: "memory::recall" }];
      const { status } = await send(client, "POST", "/api/workflows", {
        id: "crash-runs",
        name: "runs",
        steps,
      });
      if (status !== 201) throw new Error(`crash matrix: could not create the workflow (${status})`);
    },
    write: async (client, i) => {
      const body = { workflowId: "crash-runs", agentId: client.shared.runner, input: `run ${i}` };
      const { status, body: answer } = await send(client, "POST", "/api/workflows/run", body);
      if (status === 200) return answer.runId;
      // A failed run answers 422 naming it.
      return status === 422 ? (/run (run-[\w-]+)/.exec(answer?.error ?? "")?.[1] ?? null) : null;
    },
    verify: async (client, ids) => {
      const problems = await eachStatus(client, ids, (id) => `/api/workflows/runs/${id}`);
      // Runs the kill caught in flight resume (or are marked interrupted) after the restart: none stays running.
      const deadline = Date.now() + 15_000;
      let running: string[] = [];
      do {
        running = [];
        for (let offset = 0; ; offset += 100) {
          const { body } = await send(
            client,
            "GET",
            `/api/workflows/crash-runs/runs?limit=100&offset=${offset}`,
          );
          const runs: JsonBody[] = body?.runs ?? [];
          running.push(...runs.filter((run) => run.status === "running").map((run) => run.runId));
          if (runs.length < 100) break;
        }
        if (running.length > 0) await new Promise((resolve) => setTimeout(resolve, 250));
      } while (running.length > 0 && Date.now() < deadline);
      return [...problems, ...running.map((id) => `${id} still running after the restart`)];
    },
  },
  {
    name: "vault",
    write: async (client, i) => {
      const key = `crash-secret-${Date.now()}-${i}`;
      const { status } = await send(client, "POST", "/api/vault", { key, value: `v${i}` });
      return status === 201 ? key : null;
    },
    verify: async (client, ids) =>
      missingOrDoubled(
        ids,
        ((await send(client, "GET", "/api/vault")).body?.keys ?? []).map((entry: JsonBody) => entry.key),
      ),
  },
  {
    name: "keys",
    write: (client, i) => acked(client, "POST", "/api/keys", { name: `crash-key-${i}` }),
    verify: async (client, ids) =>
      missingOrDoubled(
        ids,
        (await listAll(client, "/api/keys", "keys")).map((key) => key.id),
      ),
  },
  {
    name: "realms",
    write: (client, i) =>
      acked(client, "POST", "/api/realms", { name: `crash realm ${i}`, owner: "crash@test" }),
    verify: (client, ids) => eachStatus(client, ids, (id) => `/api/realms/${id}`),
  },
  {
    name: "hierarchy",
    write: async (client, i) => {
      const agentId = await acked(client, "POST", "/api/agents", {
        name: `crash-node-${i}`,
        model: "gpt-4o",
      });
      if (!agentId) return null;
      const body = { realmId: REALM, agentId, title: "crash" };
      const { status } = await send(client, "POST", "/api/hierarchy", body);
      return status < 300 ? agentId : null;
    },
    verify: (client, ids) => eachStatus(client, ids, (id) => `/api/hierarchy/${REALM}/chain/${id}`),
  },
];
