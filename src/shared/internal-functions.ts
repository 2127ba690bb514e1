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
  "auth::",
  "vault::",
  "security::",
  "engine::",
  "agent::",
  "workflow::",
  "catalog::",
  "openai::",
  "api::",
];
const INTERNAL_IDS = new Set(["publish", "memory::forget_agent"]);

export function isInternalFunction(id: string, metadata?: Record<string, unknown>): boolean {
  return (
    INTERNAL_IDS.has(id) ||
    INTERNAL_PREFIXES.some((prefix) => id.startsWith(prefix)) ||
    metadata?.internal === true
  );
}

/** A pattern that can only name internal functions (`state::*`, `vault::get`). */
export function namesOnlyInternal(pattern: string): boolean {
  if (!pattern.includes("*")) return isInternalFunction(pattern);
  const literal = pattern.split("*")[0] ?? "";
  return INTERNAL_PREFIXES.some((prefix) => literal.startsWith(prefix));
}

export const INTERNAL_FUNCTIONS_TEXT = `${INTERNAL_PREFIXES.join(", ")} and ${[...INTERNAL_IDS].join(", ")}`;
