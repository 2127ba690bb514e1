import { createHash } from "node:crypto";
import { call } from "../../engine/call.ts";
import type { TriggerFn } from "../../engine/types.ts";
import { isFunctionNotFound } from "../../shared/errors.ts";
import { CONTEXT_READ_TIMEOUT_MS } from "./context.ts";

/**
 * A digest of what an agent can see that would give it something to do (`wakeOn: "changes"`): the
 * missions assigned to it (status, version, comments), its realm's directives (versions) and the
 * council proposals awaiting its vote. Equal digests mean nothing changed since its last run, so the
 * model need not be called. Null when a read failed: then nobody can tell, and the agent wakes.
 */
export async function changeDigest(
  trigger: TriggerFn,
  target: { realmId: string; agentId: string },
): Promise<string | null> {
  const { realmId, agentId } = target;
  const options = { timeout_ms: CONTEXT_READ_TIMEOUT_MS };
  const [missions, directives, proposals] = await Promise.all([
    list(
      call(trigger, "mission::list", { realmId, assigneeId: agentId, limit: 500 }, options),
      (answer) => answer.missions,
    ),
    list(call(trigger, "directive::list", { realmId, limit: 500 }, options), (answer) => answer.directives),
    list(
      call(trigger, "council::proposals", { realmId, status: "pending", limit: 500 }, options),
      (answer) => answer.proposals,
    ),
  ]);
  if (!missions || !directives || !proposals) return null;
  const seen = {
    missions: missions.map((m) => [m.id, m.status, m.version, m.commentCount ?? 0]),
    directives: directives.map((d) => [d.id, d.version, d.status]),
    awaitingVote: proposals
      .filter((p) => p.voters?.includes(agentId) && !p.votes?.[agentId])
      .map((p) => p.id),
  };
  return createHash("sha256").update(JSON.stringify(seen)).digest("hex");
}

/** The list in an answer; [] when the worker is not running at all, null when the read failed. */
async function list<T, V>(answer: Promise<T>, items: (answer: T) => V[]): Promise<V[] | null> {
  try {
    const value = items(await answer);
    return Array.isArray(value) ? value : null;
  } catch (error) {
    return isFunctionNotFound(error) ? [] : null;
  }
}
