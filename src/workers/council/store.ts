import type { StateClient } from "../../engine/state/client.ts";
import { HashChain } from "../../shared/hash-chain.ts";
import type { ActivityFields, Proposal } from "./schema.ts";

export const proposalsScope = (realmId: string) => `council_proposals:${realmId}`;

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

/** Every proposal and the activity chain of a realm (its head included); returns the proposals purged. */
export async function purgeCouncil(state: StateClient, realmId: string): Promise<number> {
  const scope = proposalsScope(realmId);
  const ids: string[] = [];
  for await (const { key } of state.scan(scope)) ids.push(key);
  for (const id of ids) await state.delete(scope, id);
  const chainId = encodeURIComponent(realmId);
  const entries: string[] = [];
  for await (const { key } of state.scan(ACTIVITY_SCOPE, `${chainId}:`)) entries.push(key);
  // The head first: a chain without a head reads as empty, never as one with its tail cut off.
  await state.delete(ACTIVITY_HEAD_SCOPE, chainId);
  for (const key of entries) await state.delete(ACTIVITY_SCOPE, key);
  return ids.length;
}
