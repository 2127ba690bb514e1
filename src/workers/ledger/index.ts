import { z } from "zod";
import { ACTS_FOR_AGENT } from "../../engine/acting-agent.ts";
import { stateClient } from "../../engine/state/client.ts";
import { RecentReads } from "../../engine/state/watch.ts";
import type { InvocationContext, TriggerFn } from "../../engine/types.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { assertRealmAccess, isPrivileged, requireAdmin } from "../../shared/access.ts";
import { nowIso, nowMs } from "../../shared/clock.ts";
import { conflict, forbidden } from "../../shared/errors.ts";
import { assertAgentRef, recheckAgentRef, recheckRealm, requireRealm } from "../../shared/realm-refs.ts";
import { budgetKey, budgetsScope, currentPeriod, evaluate, tighter } from "./budget.ts";
import { writeBudget } from "./opening.ts";
import { countGathered, queueCost, sweepPending } from "./pending.ts";
import {
  type Budget,
  budgetRecord,
  checkInput,
  checkResult,
  costInput,
  costMessage,
  purgeAgentInput,
  purgeInput,
  type SpendInput,
  setBudgetInput,
  spendEvent,
  spendInput,
  summaryAnswer,
  summaryInput,
} from "./schema.ts";
import { allSpendsSettled, type LedgerDeps, spend, spendsSettled } from "./spend.ts";
import { purgeAgent, purgeRealm } from "./store.ts";
import { summarize } from "./totals.ts";

/**
 * Budgets as the check read them (issue #14: two reads before every model call), until this process
 * writes the realm's budgets (a spend charging one, a budget set) or a second passes: a spend counted by
 * another cluster node reaches this node's checks within that second. Spends themselves read budgets
 * fresh, so a hard limit is never charged past.
 */
const recentBudgets = new RecentReads<TriggerFn, Budget | null>(1000);

/** Ledger: budgets with hard and soft limits, spend recording, summaries from running totals. */
export function registerLedger(
  worker: WorkerClient,
  options: { background?: boolean; onShutdown?: (hook: () => Promise<void>) => void } = {},
): { ready?: Promise<void> } {
  const trigger = worker.trigger.bind(worker);
  const state = stateClient(trigger);
  const deps: LedgerDeps = {
    trigger,
    state,
    // Checked once per group of spends (see spend): not `write`, since a cost already incurred is
    // recorded even in an archived realm; but a realm being deleted keeps nothing, and a record made
    // while it was being deleted is taken away again.
    realm: {
      before: async (realmId) => {
        const realm = await requireRealm(trigger, realmId);
        if (realm?.deleting) throw conflict(`Realm ${realmId} is being deleted`);
      },
      after: (realmId) => recheckRealm(trigger, realmId, () => purgeRealm(state, realmId)),
    },
  };

  worker.registerFunction(
    {
      id: "ledger::set_budget",
      description: "Create or update a monthly budget, per agent or realm-wide (agentId absent)",
      input: setBudgetInput,
      output: budgetRecord,
    },
    async (input, ctx) => {
      const { realmId, agentId } = input;
      assertRealmAccess(ctx, realmId);
      // The realm-wide budget caps the whole tenant: the operator's control, like the realm's status.
      if (agentId === undefined && !isPrivileged(ctx.auth)) {
        throw forbidden("The realm-wide budget can only be set with an admin key");
      }
      await requireRealm(trigger, realmId, { write: true });
      const known = agentId !== undefined && (await assertAgentRef(trigger, agentId, realmId));
      const written = await writeBudget(state, input, nowMs(), nowIso());
      // A realm or agent delete that began meanwhile has purged, or will purge, what it saw: see to the rest.
      await recheckRealm(trigger, realmId, () => purgeRealm(state, realmId));
      if (agentId !== undefined) {
        await recheckAgentRef(trigger, agentId, realmId, known, () => purgeAgent(state, realmId, agentId));
      }
      return written;
    },
  );

  worker.registerFunction(
    {
      id: "ledger::check",
      description:
        "May the agent spend? Its own budget and the realm's both apply; the tighter one is reported",
      input: checkInput,
      metadata: ACTS_FOR_AGENT,
      output: checkResult,
    },
    async ({ realmId, agentId }, ctx) => {
      assertRealmAccess(ctx, realmId);
      await requireRealm(trigger, realmId);
      const scope = budgetsScope(realmId);
      const now = nowMs();
      // Read-only, before every model call: budgets as read moments ago (see recentBudgets).
      const read = (key: string) =>
        recentBudgets.read(trigger, scope, key, () => state.get<Budget>(scope, key));
      let [agent, realm] = await Promise.all([read(budgetKey(agentId)), read(budgetKey())]);
      // A budget counts the costs this node took moments ago too (pending.ts): the check waits for them.
      if (agent || realm) {
        countGathered(deps);
        await spendsSettled(deps, realmId);
        [agent, realm] = await Promise.all([read(budgetKey(agentId)), read(budgetKey())]);
      }
      return tighter(
        agent && evaluate(currentPeriod(agent, now), "agent", agentId),
        realm && evaluate(currentPeriod(realm, now), "realm", agentId),
      );
    },
  );

  const record = (input: SpendInput, ctx: InvocationContext) => {
    assertRealmAccess(ctx, input.realmId);
    return spend(deps, input);
  };

  worker.registerFunction(
    {
      id: "ledger::spend",
      description: "Record a spend (cents, fractions kept to 6 places); 402 past a hard limit",
      input: spendInput,
      output: spendEvent,
    },
    record,
  );

  worker.registerFunction(
    {
      id: "ledger::record_cost",
      description:
        "Record a model call's cost (a cost.incurred message, extra fields ignored); counted once by eventId",
      input: costInput,
    },
    async ({ recorded, ...input }, ctx) => {
      if (recorded) return null;
      assertRealmAccess(ctx, input.realmId);
      return queueCost(deps, input);
    },
  );

  worker.registerFunction(
    {
      id: "ledger::sweep_pending",
      description: "Count the costs a dead process took but did not count (cron, internal)",
      input: z.object({}).passthrough(),
    },
    async (_input, ctx) => {
      requireAdmin(ctx);
      return { taken: await sweepPending(deps, false) };
    },
  );

  // Every answered model call of this service publishes its cost already recorded: the subscription
  // looks at that flag alone and leaves the message's validation to record_cost when there is work.
  worker.registerFunction(
    {
      id: "ledger::on_cost_incurred",
      description: "The cost.incurred subscription: records a cost not marked recorded (ledger::record_cost)",
      input: costMessage,
    },
    async (message) =>
      message.recorded === true ? null : trigger({ function_id: "ledger::record_cost", payload: message }),
  );

  worker.registerFunction(
    {
      id: "ledger::summary",
      description: "Spend totals of a realm, all time or for one month, broken down by a group",
      input: summaryInput,
      output: summaryAnswer,
    },
    async ({ realmId, groupBy, period }, ctx) => {
      assertRealmAccess(ctx, realmId);
      await requireRealm(trigger, realmId);
      countGathered(deps);
      await spendsSettled(deps, realmId);
      return summarize(state, realmId, groupBy, period);
    },
  );

  worker.registerFunction(
    {
      id: "ledger::purge_realm",
      description: "Delete every budget, spend event and total of a realm (realm delete)",
      input: purgeInput,
    },
    async ({ realmId }, ctx) => {
      requireAdmin(ctx);
      return { realmId, deleted: await purgeRealm(state, realmId) };
    },
  );

  worker.registerFunction(
    {
      id: "ledger::purge_agent",
      description: "Delete a deleted agent's budget (agent delete); its spend history and the totals stay",
      input: purgeAgentInput,
    },
    async ({ realmId, agentId }, ctx) => {
      requireAdmin(ctx);
      return { realmId, agentId, deleted: await purgeAgent(state, realmId, agentId) };
    },
  );

  worker.registerRoute("ledger::set_budget", "POST", "/api/ledger/budget", { status: 200 });
  worker.registerRoute("ledger::check", "GET", "/api/ledger/check/:realmId/:agentId");
  worker.registerRoute("ledger::spend", "POST", "/api/ledger/spend", { status: 201 });
  worker.registerRoute("ledger::summary", "GET", "/api/ledger/summary/:realmId");
  worker.registerTrigger({
    type: "subscribe",
    function_id: "ledger::on_cost_incurred",
    config: { topic: "cost.incurred" },
  });
  // A stopping service counts the costs it took (what it cannot count stays pending for the next start).
  options.onShutdown?.(async () => {
    countGathered(deps);
    await allSpendsSettled(deps);
  });
  if (options.background === false) return {};
  worker.registerTrigger({
    type: "cron",
    function_id: "ledger::sweep_pending",
    config: { expression: "*/5 * * * * *" },
  });
  // What the last process took and did not count is counted first; if the storage cannot be listed
  // now, the periodic sweep counts it once it is stale.
  return {
    ready: sweepPending(deps, true).then(
      () => undefined,
      () => undefined,
    ),
  };
}
