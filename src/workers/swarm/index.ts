import { ACTS_FOR_AGENT, actingAgentOf } from "../../engine/acting-agent.ts";
import { call } from "../../engine/call.ts";
import { casUpdate } from "../../engine/state/cas.ts";
import { stateClient } from "../../engine/state/client.ts";
import { type InvocationContext, systemPrincipal } from "../../engine/types.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { assertRealmAccess, callerRealm, requireAdmin } from "../../shared/access.ts";
import { nowIso, nowMs } from "../../shared/clock.ts";
import { type AppError, forbidden, notFound } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { newestFirst, pageOf } from "../../shared/pagination.ts";
import { assertAgentRef, recheckRealm, requireRealm } from "../../shared/realm-refs.ts";
import { registerRetention } from "../../shared/retention.ts";
import { runSwarm } from "./run.ts";
import {
  broadcastAck,
  broadcastInput,
  collectAnswer,
  consensusAnswer,
  consensusInput,
  createInput,
  dissolveAnswer,
  listInput,
  purgeRealmInput,
  runInput,
  type Swarm,
  type SwarmStatus,
  swarmIdInput,
  swarmPage,
  swarmRecord,
  swarmRunAnswer,
} from "./schema.ts";
import {
  ACTIVE_SCOPE,
  appendMessage,
  DUE_SCOPE,
  type DueEntry,
  dueKey,
  isDue,
  messagesOf,
  onceBackfilled,
  purgeSwarm,
  realmSwarmIds,
  SWARMS_SCOPE,
  storeNewSwarm,
  sweepSwarms,
} from "./store.ts";
import { collected, consensusOf } from "./tally.ts";

/** Expiry entries the sweep reads at a time. */
const SWEEP_PAGE = 100;

/** Swarms: a realm's agents working on one goal, exchanging observations and deciding by vote. */
export function registerSwarm(
  worker: WorkerClient,
  /**
   * background false (a CLI command): no expiry or retention sweep, which belong to the serving process.
   * retentionDays: days an ended swarm is kept (AGENTOS_SWARM_RETENTION_DAYS; 0 or unset: forever).
   */
  options: { background?: boolean; retentionDays?: number; warn?: (message: string) => void } = {},
): { ready?: Promise<void> } {
  const trigger = worker.trigger.bind(worker);
  const state = stateClient(trigger);
  const audit = (type: string, detail: Record<string, unknown>) =>
    void call(trigger, "security::audit", { type, detail }, { action: { type: "void" } });
  const backfilled = onceBackfilled(state);
  // The serving process indexes older swarms at start; anything reading the indexes waits for it.
  if (options.background !== false) backfilled().catch(() => undefined);

  /** The swarm, if the caller's realm may see it (another realm's is as missing as none), expired on time. */
  const load = async (swarmId: string, ctx: InvocationContext): Promise<Swarm> => {
    const swarm = await state.get<Swarm>(SWARMS_SCOPE, swarmId);
    if (!swarm) throw notFound(`Swarm ${swarmId} not found`);
    assertRealmAccess(ctx, swarm.realmId, `Swarm ${swarmId} not found`);
    return isDue(swarm, nowMs()) ? end(swarmId, "expired") : swarm;
  };

  /** As load, for a change: an archived realm is read-only, and one being deleted takes nothing new. */
  const loadWritable = async (swarmId: string, ctx: InvocationContext): Promise<Swarm> => {
    const swarm = await load(swarmId, ctx);
    await requireRealm(trigger, swarm.realmId, { write: true });
    return swarm;
  };

  /** A realm's swarms, read a page of ids at a time (a swarm removed meanwhile is skipped). */
  async function* realmSwarms(realmId: string): AsyncGenerator<Swarm> {
    const ids = await realmSwarmIds(state, realmId);
    for (let start = 0; start < ids.length; start += 100) {
      const page = await Promise.all(
        ids.slice(start, start + 100).map((swarmId) => state.get<Swarm>(SWARMS_SCOPE, swarmId)),
      );
      for (const swarm of page) if (swarm) yield swarm;
      // The embedded store answers at once: without this a realm of many swarms held every other
      // request until its listing was read.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Ends an active swarm once (compare-and-swap); returns the swarm as it is then. */
  const end = async (swarmId: string, status: Exclude<SwarmStatus, "active">): Promise<Swarm> => {
    const { value } = await casUpdate<Swarm>(state, SWARMS_SCOPE, swarmId, ({ value: swarm }) => {
      if (!swarm) throw notFound(`Swarm ${swarmId} not found`);
      if (swarm.status !== "active") return undefined;
      return { ...swarm, status, endedAt: nowIso() };
    });
    const swarm = value as Swarm;
    await state.delete(DUE_SCOPE, dueKey(swarm));
    await state.delete(ACTIVE_SCOPE, swarmId);
    return swarm;
  };

  worker.registerFunction(
    {
      id: "swarm::create",
      description: "Start a swarm of a realm's agents on a goal: {swarmId, ...}",
      input: createInput,
      output: swarmRecord,
    },
    async ({ realmId: named, ...input }, ctx) => {
      const realmId = callerRealm(ctx, named);
      await requireRealm(trigger, realmId, { write: true });
      for (const agentId of input.agentIds) await assertAgentRef(trigger, agentId, realmId);
      const created = nowMs();
      const swarm: Swarm = {
        ...input,
        swarmId: newId("swm"),
        realmId,
        status: "active",
        messageCount: 0,
        createdAt: new Date(created).toISOString(),
        expiresAt: new Date(created + input.maxDurationMs).toISOString(),
      };
      await storeNewSwarm(state, swarm);
      // A realm delete that began meanwhile may have purged the realm's swarms already: this one goes too.
      await recheckRealm(trigger, realmId, () => purgeSwarm(state, realmId, swarm.swarmId));
      audit("swarm_created", { swarmId: swarm.swarmId, goal: swarm.goal, agentCount: swarm.agentIds.length });
      return swarm;
    },
  );

  worker.registerFunction(
    {
      id: "swarm::broadcast",
      description: "A member's observation, proposal or vote (for, against, abstain; the latest counts)",
      input: broadcastInput,
      metadata: ACTS_FOR_AGENT,
      output: broadcastAck,
    },
    async (input, ctx) => {
      const swarm = await loadWritable(input.swarmId, ctx);
      if (!swarm.agentIds.includes(input.agentId)) {
        throw forbidden(`${input.agentId} is not a member of swarm ${swarm.swarmId}`);
      }
      const message = await appendMessage(state, input);
      return { acknowledged: true, swarmId: swarm.swarmId, seq: message.seq };
    },
  );

  worker.registerFunction(
    {
      id: "swarm::status",
      description: "A swarm: its goal, members, status and message count",
      input: swarmIdInput,
      output: swarmRecord,
    },
    ({ swarmId }, ctx) => load(swarmId, ctx),
  );

  worker.registerFunction(
    {
      id: "swarm::consensus",
      description:
        "Whether the members agree on a proposal: {hasConsensus, votesFor, votesAgainst, threshold, totalVoters}",
      input: consensusInput,
      output: consensusAnswer,
    },
    async ({ swarmId, proposal }, ctx) => {
      const swarm = await load(swarmId, ctx);
      return consensusOf(swarm, await messagesOf(state, swarmId), proposal);
    },
  );

  worker.registerFunction(
    {
      id: "swarm::collect",
      description: "Every message: {totalMessages, observations, proposals, votes, agents}",
      input: swarmIdInput,
      output: collectAnswer,
    },
    async ({ swarmId }, ctx) => {
      await load(swarmId, ctx);
      return collected(await messagesOf(state, swarmId));
    },
  );

  worker.registerFunction(
    {
      id: "swarm::dissolve",
      description: "End a swarm; each member's findings go to its memory (session swarm:<id>)",
      input: swarmIdInput,
      output: dissolveAnswer,
    },
    async ({ swarmId }, ctx) => {
      const before = await loadWritable(swarmId, ctx);
      const swarm = before.status === "active" ? await end(swarmId, "dissolved") : before;
      const messages = await messagesOf(state, swarmId);
      let archived = 0;
      if (before.status === "active") {
        for (const agentId of swarm.agentIds) {
          const findings = messages.filter((message) => message.agentId === agentId);
          if (findings.length === 0) continue;
          await call(
            trigger,
            "memory::store",
            {
              agentId,
              sessionId: `swarm:${swarmId}`,
              role: "system",
              content: `${swarmId} ${JSON.stringify(findings.slice(0, 10))}`,
            },
            { auth: systemPrincipal },
          ).then(
            () => archived++,
            () => undefined,
          );
        }
        audit("swarm_dissolved", { swarmId, messageCount: messages.length });
      }
      return { swarmId, status: swarm.status, messageCount: messages.length, archived };
    },
  );

  worker.registerFunction(
    {
      id: "swarm::run",
      description:
        "Let the swarm run itself: each member agent, in parallel, weighs in on the goal each round until consensus",
      input: runInput,
      output: swarmRunAnswer,
    },
    async ({ swarmId, rounds }, ctx) => {
      // Each turn of a run is an agent's turn: a member whose model (steered by what it read) called
      // swarm::run again would start members × rounds more turns, each able to do the same, without end.
      const agentId = actingAgentOf(ctx.auth);
      if (agentId !== undefined) {
        throw forbidden(`Agent ${agentId} may not run a swarm: a swarm is run by an API key or a workflow`);
      }
      const swarm = await load(swarmId, ctx);
      return runSwarm({ trigger, state, auth: ctx.auth, signal: ctx.signal }, swarm, rounds);
    },
  );

  worker.registerFunction(
    {
      id: "swarm::sweep",
      description: "Expire the swarms whose time is up (each second, on one node; internal)",
      // Every realm's swarms: the service's plumbing, never an agent's tool nor a realm's workflow step.
      metadata: { internal: true },
    },
    async () => {
      await backfilled();
      const now = nowMs();
      const due: DueEntry[] = [];
      // Soonest first, a page at a time: the first swarm not yet due ends the read.
      let cursor: string | undefined;
      do {
        const page = await state.list<DueEntry>(DUE_SCOPE, { limit: SWEEP_PAGE, cursor });
        const upTo = page.items.findIndex(({ value }) => Date.parse(value.expiresAt) > now);
        due.push(...page.items.slice(0, upTo === -1 ? undefined : upTo).map(({ value }) => value));
        cursor = upTo === -1 ? (page.nextCursor ?? undefined) : undefined;
      } while (cursor);
      for (const entry of due) {
        await end(entry.swarmId, "expired").catch(async (error: AppError) => {
          // A swarm gone from under its entry: the entry goes too, or it would be read each second.
          if (error?.code === "not_found") await state.delete(DUE_SCOPE, dueKey(entry));
        });
      }
      return { expired: due.length };
    },
  );

  worker.registerFunction(
    {
      id: "swarm::list",
      description: "A realm's swarms, newest first, filtered by status: {swarms, count, nextCursor}",
      input: listInput,
      output: swarmPage,
    },
    async ({ realmId: named, status, limit, cursor }, ctx) => {
      const realmId = callerRealm(ctx, named);
      await requireRealm(trigger, realmId);
      await backfilled();
      const now = nowMs();
      // A swarm past its time shows as expired before the sweep gets to it.
      const shown = (swarm: Swarm): Swarm => (isDue(swarm, now) ? { ...swarm, status: "expired" } : swarm);
      // The id and time of each match only: a realm may hold many swarms, each with its members and goal.
      const matching: Array<Pick<Swarm, "swarmId" | "createdAt">> = [];
      // The realm's own swarms only, through its index: other realms' swarms cost this listing nothing.
      for await (const value of realmSwarms(realmId)) {
        if (!status || shown(value).status === status)
          matching.push({ swarmId: value.swarmId, createdAt: value.createdAt });
      }
      const page = pageOf(matching, (swarm) => newestFirst(swarm.createdAt, swarm.swarmId), {
        limit,
        cursor,
      });
      const read = await Promise.all(
        page.items.map(({ swarmId }) => state.get<Swarm>(SWARMS_SCOPE, swarmId)),
      );
      const swarms = read.filter((swarm): swarm is Swarm => swarm !== null).map(shown);
      return { swarms, count: matching.length, nextCursor: page.nextCursor };
    },
  );

  worker.registerFunction(
    {
      id: "swarm::purge_realm",
      description: "Delete a realm's swarms and their messages",
      input: purgeRealmInput,
    },
    async ({ realmId }, ctx) => {
      requireAdmin(ctx);
      await backfilled();
      const ids = await realmSwarmIds(state, realmId);
      for (const swarmId of ids) await purgeSwarm(state, realmId, swarmId);
      return { purged: ids.length };
    },
  );

  registerRetention(worker, {
    id: "swarm::sweep_retention",
    what: "ended swarms (with their messages)",
    days: options.retentionDays ?? 0,
    background: options.background !== false,
    sweep: async (cutoff, now) => {
      await backfilled();
      return sweepSwarms(state, cutoff, now);
    },
    warn: options.warn,
  });
  if (options.background !== false) {
    worker.registerTrigger({
      type: "cron",
      function_id: "swarm::sweep",
      config: { expression: "* * * * * *" },
    });
  }
  worker.registerRoute("swarm::create", "POST", "/api/swarm/create", { status: 201 });
  worker.registerRoute("swarm::list", "GET", "/api/swarm");
  worker.registerRoute("swarm::broadcast", "POST", "/api/swarm/:swarmId/broadcast");
  worker.registerRoute("swarm::status", "GET", "/api/swarm/:swarmId/status");
  worker.registerRoute("swarm::consensus", "POST", "/api/swarm/:swarmId/consensus");
  worker.registerRoute("swarm::collect", "GET", "/api/swarm/:swarmId/collect");
  worker.registerRoute("swarm::dissolve", "POST", "/api/swarm/:swarmId/dissolve");
  worker.registerRoute("swarm::run", "POST", "/api/swarm/:swarmId/run");
  return {};
}
