import { createHash } from "node:crypto";
import type { TriggerFn } from "../../engine/types.ts";
import { isFunctionNotFound } from "../../shared/errors.ts";
import { CONTEXT_READ_TIMEOUT_MS } from "./context.ts";

type Item = Record<string, unknown>;

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
  const [missions, directives, proposals] = await Promise.all([
    list(trigger, "mission::list", { realmId, assigneeId: agentId, limit: 500 }, "missions"),
    list(trigger, "directive::list", { realmId, limit: 500 }, "directives"),
    list(trigger, "council::proposals", { realmId, status: "pending", limit: 500 }, "proposals"),
  ]);
  if (!missions || !directives || !proposals) return null;
  const seen = {
    missions: missions.map((m) => [m.id, m.status, m.version, m.commentCount ?? 0]),
    directives: directives.map((d) => [d.id, d.version, d.status]),
    awaitingVote: proposals
      .filter(
        (p) =>
          (p.voters as string[] | undefined)?.includes(agentId) && !(p.votes as Item | undefined)?.[agentId],
      )
      .map((p) => p.id),
  };
  return createHash("sha256").update(JSON.stringify(seen)).digest("hex");
}

/** The list field of an answer; [] when the worker is not running at all, null when the read failed. */
async function list(
  trigger: TriggerFn,
  function_id: string,
  payload: Record<string, unknown>,
  field: string,
): Promise<Item[] | null> {
  try {
    const answer = (await trigger({
      function_id,
      payload,
      timeout_ms: CONTEXT_READ_TIMEOUT_MS,
    })) as Item | null;
    const value = answer?.[field];
    return Array.isArray(value) ? (value as Item[]) : null;
  } catch (error) {
    return isFunctionNotFound(error) ? [] : null;
  }
}
