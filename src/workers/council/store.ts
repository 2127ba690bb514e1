import { isConflict } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import { nowIso, nowMs } from "../../shared/clock.ts";
import { HashChain } from "../../shared/hash-chain.ts";
import type { ActivityFields, Proposal, ProposalAction } from "./schema.ts";

const PROPOSALS_PREFIX = "council_proposals:";
export const proposalsScope = (realmId: string) => `${PROPOSALS_PREFIX}${realmId}`;

/**
 * Approved proposals of every realm whose effect has no outcome yet (pending or applying), keyed by
 * realm then proposal: what the recovery sweep reads instead of every proposal of every realm. A mark
 * is written before the approval it stands for, so no approved effect is ever left where the sweep
 * cannot see it; a mark whose approval never landed is dropped by the sweep.
 */
export const EFFECTS_SCOPE = "council_effects";
const META_SCOPE = "council_meta";
const EFFECTS_INDEXED = "effects_indexed";

export interface EffectMark {
  realmId: string;
  id: string;
  /** When the mark was written (epoch ms). */
  at: number;
}

const effectKey = (realmId: string, id: string) => `${encodeURIComponent(realmId)}:${id}`;

export async function markEffect(
  state: StateClient,
  proposal: Pick<Proposal, "realmId" | "id">,
): Promise<void> {
  const mark: EffectMark = { realmId: proposal.realmId, id: proposal.id, at: nowMs() };
  await state.set(EFFECTS_SCOPE, effectKey(proposal.realmId, proposal.id), mark);
}

/**
 * The mark taken away: with `version`, only the mark as the sweep read it (a vote that marked it again
 * meanwhile is about to approve it, and keeps its mark).
 */
export async function unmarkEffect(
  state: StateClient,
  proposal: Pick<Proposal, "realmId" | "id">,
  version?: number,
): Promise<void> {
  try {
    await state.delete(EFFECTS_SCOPE, effectKey(proposal.realmId, proposal.id), version);
  } catch (error) {
    if (!isConflict(error)) throw error;
  }
}

/**
 * Marks the unsettled effects of proposals approved before the marks existed, once per store (a meta
 * record says it is done); idempotent, so a run cut short is run again. `scopes` lists every scope.
 */
export async function indexUnsettledEffects(
  state: StateClient,
  scopes: () => Promise<string[]>,
): Promise<void> {
  if (await state.get(META_SCOPE, EFFECTS_INDEXED)) return;
  for (const scope of await scopes()) {
    if (!scope.startsWith(PROPOSALS_PREFIX)) continue;
    for await (const { value } of state.scan<Proposal>(scope)) {
      const status = value.effect?.status;
      if (value.status === "approved" && (status === "pending" || status === "applying")) {
        await markEffect(state, value);
      }
    }
  }
  await state.set(META_SCOPE, EFFECTS_INDEXED, { doneAt: nowIso() });
}

const ACTIVITY_SCOPE = "council_activity";
const ACTIVITY_HEAD_SCOPE = "council_activity_head";

/**
 * One SHA-256 chain per realm (the project's hash chain, over the canonical JSON of each whole entry),
 * with its head stored apart so deletions at the tail are detected too. A chain id may not hold ":".
 */
export function activityChain(state: StateClient, realmId: string): HashChain<ActivityFields> {
  return new HashChain<ActivityFields>(state, {
    scope: ACTIVITY_SCOPE,
    headScope: ACTIVITY_HEAD_SCOPE,
    chainId: encodeURIComponent(realmId),
  });
}

/**
 * The id and time of each of a realm's proposals that `keep` takes, in no particular order (listings page
 * by pageOf, then read the page's proposals): a listing holds no more than that of every proposal.
 */
export async function matchingProposals(
  state: StateClient,
  realmId: string,
  keep: (proposal: Proposal) => boolean,
): Promise<Array<Pick<Proposal, "id" | "createdAt">>> {
  const matches: Array<Pick<Proposal, "id" | "createdAt">> = [];
  for await (const { value } of state.scan<Proposal>(proposalsScope(realmId))) {
    if (keep(value)) matches.push({ id: value.id, createdAt: value.createdAt });
  }
  return matches;
}

/**
 * Every proposal, effect mark and the activity chain of a realm (its head included); returns the
 * proposals purged.
 */
export async function purgeCouncil(state: StateClient, realmId: string): Promise<number> {
  const scope = proposalsScope(realmId);
  const ids: string[] = [];
  for await (const { key } of state.scan(scope)) ids.push(key);
  for (const id of ids) await state.delete(scope, id);
  const chainId = encodeURIComponent(realmId);
  const marks: string[] = [];
  for await (const { key } of state.scan(EFFECTS_SCOPE, `${chainId}:`)) marks.push(key);
  for (const key of marks) await state.delete(EFFECTS_SCOPE, key);
  const entries: string[] = [];
  for await (const { key } of state.scan(ACTIVITY_SCOPE, `${chainId}:`)) entries.push(key);
  // The head first: a chain without a head reads as empty, never as one with its tail cut off.
  await state.delete(ACTIVITY_HEAD_SCOPE, chainId);
  for (const key of entries) await state.delete(ACTIVITY_SCOPE, key);
  return ids.length;
}

/** A log entry about `proposal`. */
export function entry(
  proposal: Proposal,
  actorKind: ActivityFields["actorKind"],
  actorId: string,
  action: ProposalAction,
  details: Record<string, unknown>,
): ActivityFields {
  return {
    realmId: proposal.realmId,
    actorKind,
    actorId,
    action,
    entityType: "proposal",
    entityId: proposal.id,
    details,
  };
}
