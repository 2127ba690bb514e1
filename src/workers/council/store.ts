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

/** A realm's proposals passing the filters, in no particular order (listings page by pageOf). */
export async function listProposals(
  state: StateClient,
  realmId: string,
  filter: { status?: Proposal["status"]; kind?: Proposal["kind"] },
): Promise<Proposal[]> {
  const matches: Proposal[] = [];
  for await (const { value } of state.scan<Proposal>(proposalsScope(realmId))) {
    if (filter.status !== undefined && value.status !== filter.status) continue;
    if (filter.kind !== undefined && value.kind !== filter.kind) continue;
    matches.push(value);
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
