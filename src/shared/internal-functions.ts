/**
 * Functions of the service's own plumbing: storage, keys, secrets, audit, the engine, agents,
 * workflows, the catalog. They run under the caller's principal but check no realm, because they are
 * meant to be reached only from inside the service. So neither an agent's tool call nor a workflow
 * step run for a realm-bound key may name one: either would let a key (or a model, or a page a model
 * read) cross realms or mint keys.
 */
const INTERNAL_PREFIXES = [
  "state::",
  "search::",
  // The vector index takes any index and scope, as search:: does: its callers check who may see what.
  "vector::",
  "auth::",
  "vault::",
  "security::",
  "engine::",
  "agent::",
  "workflow::",
  "catalog::",
  "openai::",
  "api::",
  // Governance of the control plane is for keys, not for models: an agent must not re-budget itself,
  // reshape its org chart, schedule other agents or touch realms.
  "realm::",
  "pulse::",
  // Votes and the activity log speak for council members and the service: keys only.
  "council::",
  // Channel bindings, deliveries and tool approvals are the operator's (agents use tool::channel_send).
  "channel::",
  "tools::",
  "config::",
  "integration::",
  "migrate::",
];
const INTERNAL_IDS = new Set([
  "publish",
  "memory::forget_agent",
  "ledger::set_budget",
  "ledger::spend",
  "ledger::record_cost",
  "ledger::on_cost_incurred",
  "ledger::sweep_pending",
  "hierarchy::set",
  "hierarchy::delete",
]);
/** `<group>::purge_realm {realmId}`: each realm-scoped worker's part of a realm delete. */
export const PURGE_REALM_SUFFIX = "::purge_realm";
/** `<group>::purge_agent {realmId, agentId}`: each worker's part of an agent delete (org chart, pulse). */
export const PURGE_AGENT_SUFFIX = "::purge_agent";

export function isInternalFunction(id: string, metadata?: Record<string, unknown>): boolean {
  return (
    INTERNAL_IDS.has(id) ||
    INTERNAL_PREFIXES.some((prefix) => id.startsWith(prefix)) ||
    id.endsWith(PURGE_REALM_SUFFIX) ||
    id.endsWith(PURGE_AGENT_SUFFIX) ||
    metadata?.internal === true
  );
}

/**
 * Internal functions a key may still name as a workflow step: each checks the caller's realm itself
 * (`agent::chat` loads the agent as the caller, another realm's agent is a 404), so a step reaches
 * nothing the key could not reach over HTTP. Agents still cannot call them as tools.
 */
const STEP_CALLABLE_IDS = new Set(["agent::chat"]);

/** May a workflow step written or run by a non-admin key name this function? */
export function isStepCallable(id: string, metadata?: Record<string, unknown>): boolean {
  return STEP_CALLABLE_IDS.has(id) || !isInternalFunction(id, metadata);
}

/** A pattern that can only name internal functions (`state::*`, `vault::get`). */
export function namesOnlyInternal(pattern: string): boolean {
  if (!pattern.includes("*")) return isInternalFunction(pattern);
  const literal = pattern.split("*")[0] ?? "";
  return INTERNAL_PREFIXES.some((prefix) => literal.startsWith(prefix));
}

export const INTERNAL_FUNCTIONS_TEXT = `${INTERNAL_PREFIXES.join(", ")}, *${PURGE_REALM_SUFFIX}, *${PURGE_AGENT_SUFFIX} and ${[...INTERNAL_IDS].join(", ")}`;

/** Functions whose result is a secret (a new key, a vault value): never stored, e.g. in a workflow run. */
const SECRET_RESULT_IDS = new Set(["auth::keys::create", "vault::get"]);

export function returnsSecret(id: string, metadata?: Record<string, unknown>): boolean {
  return SECRET_RESULT_IDS.has(id) || metadata?.secretResult === true;
}
