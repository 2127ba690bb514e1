import { casUpdate } from "../../engine/state/cas.ts";
import { stateClient } from "../../engine/state/client.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { assertRealmAccess } from "../../shared/access.ts";
import { nowIso, nowMs } from "../../shared/clock.ts";
import { requireAgentInRealm, requireRealm } from "../../shared/realm-refs.ts";
import { budgetKey, budgetsScope, currentPeriod, evaluate, tighter, upsertBudget } from "./budget.ts";
import { type Budget, checkInput, purgeInput, setBudgetInput, spendInput, summaryInput } from "./schema.ts";
import { type LedgerDeps, spend } from "./spend.ts";
import { purgeRealm } from "./store.ts";
import { summarize } from "./totals.ts";

/** Ledger: budgets with hard and soft limits, spend recording, summaries from running totals. */
export function registerLedger(worker: WorkerClient): { ready?: Promise<void> } {
  const trigger = worker.trigger.bind(worker);
  const state = stateClient(trigger);
  const deps: LedgerDeps = { trigger, state };

  worker.registerFunction(
    {
      id: "ledger::set_budget",
      description: "Create or update a monthly budget, per agent or realm-wide (agentId absent)",
      input: setBudgetInput,
    },
    async (input, ctx) => {
      assertRealmAccess(ctx, input.realmId);
      await requireRealm(trigger, input.realmId, { write: true });
      if (input.agentId !== undefined) await requireAgentInRealm(trigger, input.agentId, input.realmId);
      const written = await casUpdate<Budget>(
        state,
        budgetsScope(input.realmId),
        budgetKey(input.agentId),
        ({ value }) => upsertBudget(value, input, nowMs(), nowIso()),
      );
      return written.value;
    },
  );

  worker.registerFunction(
    {
      id: "ledger::check",
      description:
        "May the agent spend? Its own budget and the realm's both apply; the tighter one is reported",
      input: checkInput,
    },
    async ({ realmId, agentId }, ctx) => {
      assertRealmAccess(ctx, realmId);
      await requireRealm(trigger, realmId);
      const scope = budgetsScope(realmId);
      const now = nowMs();
      const [agent, realm] = await Promise.all([
        state.get<Budget>(scope, budgetKey(agentId)),
        state.get<Budget>(scope, budgetKey()),
      ]);
      return tighter(
        agent && evaluate(currentPeriod(agent, now), "agent", agentId),
        realm && evaluate(currentPeriod(realm, now), "realm", agentId),
      );
    },
  );

  worker.registerFunction(
    {
      id: "ledger::spend",
      description: "Record a spend (cents, fractions kept to 6 places); 402 past a hard limit",
      input: spendInput,
    },
    async (input, ctx) => {
      assertRealmAccess(ctx, input.realmId);
      // Existence only: a cost already incurred is recorded even in an archived realm.
      await requireRealm(trigger, input.realmId);
      return spend(deps, input);
    },
  );

  worker.registerFunction(
    {
      id: "ledger::summary",
      description: "Spend totals of a realm, all time or for one month, broken down by a group",
      input: summaryInput,
    },
    async ({ realmId, groupBy, period }, ctx) => {
      assertRealmAccess(ctx, realmId);
      await requireRealm(trigger, realmId);
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
      assertRealmAccess(ctx, realmId);
      return { realmId, deleted: await purgeRealm(state, realmId) };
    },
  );

  worker.registerRoute("ledger::set_budget", "POST", "/api/ledger/budget", { status: 200 });
  worker.registerRoute("ledger::check", "GET", "/api/ledger/check/:realmId/:agentId");
  worker.registerRoute("ledger::spend", "POST", "/api/ledger/spend", { status: 201 });
  worker.registerRoute("ledger::summary", "GET", "/api/ledger/summary/:realmId");
  worker.registerTrigger({
    type: "subscribe",
    function_id: "ledger::spend",
    config: { topic: "cost.incurred" },
  });
  return {};
}
