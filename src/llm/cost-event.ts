import { actingAgentOf } from "../engine/acting-agent.ts";
import { publishEvent } from "../engine/events.ts";
import { report } from "../engine/telemetry.ts";
import type { Principal, TriggerFn } from "../engine/types.ts";
import { DEFAULT_REALM_ID } from "../shared/access.ts";
import { nowIso } from "../shared/clock.ts";
import { newId } from "../shared/ids.ts";
import { costOf, type ModelEntry, type ProviderEntry, type Usage } from "./types.ts";

/** Whom a model call is charged to on the ledger. */
export interface CostAccount {
  realmId: string;
  agentId: string;
}

/**
 * Whom an agent's paid calls (its turns, embeddings, speech) are charged to and checked against: its
 * tree's root (tool::agent_spawn records it in `metadata.spawnRoot`), else itself. A sub-agent's own
 * account has no budget: charged to itself, it would spend past its root's spent budget.
 */
export function payerOf(agent: {
  id: string;
  realmId: string;
  metadata?: Record<string, unknown> | null;
}): CostAccount {
  const root = agent.metadata?.spawnRoot;
  return { realmId: agent.realmId, agentId: typeof root === "string" && root ? root : agent.id };
}

/**
 * Whom a caller's paid call is charged to: the acting agent, else the key (`apikey:<id>`), in the key's
 * realm; the system and admin keys in the default realm.
 */
export function accountOf(auth: Principal): CostAccount {
  const agentId = actingAgentOf(auth) ?? ("keyId" in auth ? `apikey:${auth.keyId}` : "system");
  return { realmId: auth.kind === "realm" ? auth.realmId : DEFAULT_REALM_ID, agentId };
}

/** What a charge names and prices: a model (its id, US dollars per million tokens) and its provider. */
export interface PricedModel {
  model: Pick<ModelEntry, "id" | "inputPrice" | "outputPrice">;
  provider: Pick<ProviderEntry, "id">;
}

/**
 * The `cost.incurred` payload of one model call, what ledger::record_cost takes (the ledger subscribes
 * it as is): cents with fractions (the ledger keeps 6 decimals), and a fresh eventId so a spend is
 * counted once across nodes. `cost` (US dollars) is the usage at the model's prices unless the provider
 * bills otherwise (audio by the second).
 */
export function costEvent(
  account: CostAccount,
  sessionId: string | null,
  choice: PricedModel,
  reported: Usage,
  cost = costOf(choice.model, countedUsage(reported)),
) {
  const usage = countedUsage(reported);
  return {
    realmId: account.realmId,
    agentId: account.agentId,
    // A price that is not a number (a catalog entry gone wrong) charges nothing rather than losing the event.
    costCents: Number.isFinite(cost) && cost > 0 ? Math.round(cost * 100 * 1e6) / 1e6 : 0,
    provider: choice.provider.id,
    model: choice.model.id,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    eventId: newId(),
    sessionId,
    cost,
    at: nowIso(),
  };
}

export type CostEvent = ReturnType<typeof costEvent>;

/** The most tokens one call is counted for (the ledger's own bound on a spend's token counts). */
const MAX_COUNTED_TOKENS = 1_000_000_000;

/**
 * A provider's usage as the ledger can count it: whole, non-negative token counts, at most a billion.
 * A negative, fractional or non-numeric count (a custom or broken compatible server) failed the
 * ledger's input, and then nothing at all was recorded for the call.
 */
function countedUsage(usage: Usage): Usage {
  const tokens = (value: unknown) =>
    typeof value === "number" && Number.isFinite(value)
      ? Math.min(Math.max(Math.ceil(value), 0), MAX_COUNTED_TOKENS)
      : 0;
  const inputTokens = tokens(usage.inputTokens);
  const outputTokens = tokens(usage.outputTokens);
  return { ...usage, inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
}

/**
 * Gives a model call's cost to the ledger before the answer goes out (`ledger::record_cost`: a durable
 * record, counted once by its eventId moments later, with the costs taken around it), then, once the
 * answer is on its way, publishes `cost.incurred` for every other subscriber. The publish is also the
 * fallback: when the direct call fails (database briefly away), the ledger's own subscription records
 * it, still once. Without a ledger only the message goes out. A spend past a hard limit is recorded as
 * refused and never fails the call that incurred it.
 */
export async function recordCost(trigger: TriggerFn, event: CostEvent): Promise<void> {
  // No ledger, or a failure, leaves it to the subscription below (record_cost refuses nothing: a cost
  // past a hard limit is recorded as refused when it is counted).
  const recorded = await trigger({ function_id: "ledger::record_cost", payload: event }).then(
    () => true,
    () => false,
  );
  // Notifications, not part of the answer: sent once it is on its way.
  setImmediate(() => {
    // `recorded`: the ledger's subscribers on every node skip it, instead of each finding the claim.
    publishEvent(trigger, "cost.incurred", { ...event, recorded });
    report(trigger, {
      type: "model_usage",
      provider: event.provider,
      model: event.model,
      realmId: event.realmId,
      inputTokens: event.inputTokens,
      outputTokens: event.outputTokens,
      costUsd: event.cost,
    });
  });
}
