import { casUpdate } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import type { InvocationContext } from "../../engine/types.ts";
import { isPrivileged, principalLabel } from "../../shared/access.ts";
import { nowIso } from "../../shared/clock.ts";
import { isAppError, notFound } from "../../shared/errors.ts";
import { withVote } from "./decide.ts";
import type { ActivityFields, Proposal, Vote } from "./schema.ts";
import { entry, markEffect, proposalsScope } from "./store.ts";

export interface VoteDeps {
  state: StateClient;
  /** Appends to the realm's activity chain (a 409 when the realm is being deleted meanwhile). */
  record(fields: ActivityFields): Promise<unknown>;
  /** Records the decision and settles an approved proposal's effect. */
  decided(proposal: Proposal): Promise<Proposal>;
}

export interface VoteRequest {
  realmId: string;
  id: string;
  voterId: string;
  vote: Vote;
}

/** What a vote answers: the proposal, and a notice when the vote counted but what follows did not end. */
export type VoteAnswer = Proposal & { notice?: string };

/**
 * A council member's vote. Once the vote is written it counted, whatever fails after it: the voter of
 * the deciding vote is told so (with the effect left to the recovery sweep) rather than given an error
 * it would retry into "votes are closed"; and that same vote sent again (a retry after a lost answer)
 * is answered as counted, not refused.
 */
export async function castVote(
  { state, record, decided }: VoteDeps,
  { realmId, id, voterId, vote }: VoteRequest,
  ctx: InvocationContext,
): Promise<VoteAnswer> {
  const admin = isPrivileged(ctx.auth);
  let before: Proposal | undefined;
  let repeated = false;
  const { value } = await casUpdate<Proposal>(
    state,
    proposalsScope(realmId),
    id,
    async ({ value: stored }) => {
      if (!stored) throw notFound(`Proposal ${id} not found in realm ${realmId}`);
      before = stored;
      if (alreadyCounted(stored, voterId, vote, admin)) {
        repeated = true;
        return undefined;
      }
      const next = withVote(stored, voterId, vote, admin, nowIso());
      // Marked before the approval is written: an approved effect is never where the sweep cannot find it.
      if (next.effect?.status === "pending") await markEffect(state, next);
      return next;
    },
  );
  let proposal = value as Proposal;
  if (repeated) {
    return { ...proposal, notice: `${voterId}'s vote "${vote}" was already counted: ${standing(proposal)}` };
  }
  const deciding = before?.status === "pending" && proposal.status !== "pending";
  const actorKind = ctx.auth.kind === "admin" && proposal.voters.length === 0 ? "human" : "agent";
  try {
    // The voter id is a label any key of the realm may use: the entry also names the key that voted.
    await record(
      entry(proposal, actorKind, voterId, "vote_cast", {
        vote,
        tally: proposal.tally,
        by: principalLabel(ctx.auth),
      }),
    );
    // Only the vote that decided it sees the change; the effect is claimed before it is applied, so it
    // runs at most once even with the sweep (which takes it up if this vote fails from here on).
    if (deciding) proposal = await decided(proposal);
    return proposal;
  } catch (error) {
    // A vote that did not decide is sent again as it is (the latest vote counts): the error stands.
    if (!deciding || realmGone(error)) throw error;
    const latest = await state.get<Proposal>(proposalsScope(realmId), id).catch(() => null);
    const now = latest ?? proposal;
    // An unexpected error's own text stays in the service, as the HTTP layer keeps a 500's.
    const why = isAppError(error) ? error.message : "an internal error";
    return {
      ...now,
      notice: `The vote counted, but what follows it failed (${why}): ${standing(now)}`,
    };
  }
}

/**
 * The same voter's same vote on a proposal it already decided (or that was decided since): a retry,
 * answered as counted. Whoever could not have cast it (not a member; no members and not an admin key)
 * is refused by withVote as before.
 */
function alreadyCounted(proposal: Proposal, voterId: string, vote: Vote, admin: boolean): boolean {
  // Decided by the votes: an expired or cancelled proposal closed its votes otherwise (a 409 says so).
  const decided = proposal.status === "approved" || proposal.status === "rejected";
  if (!decided || proposal.votes[voterId]?.vote !== vote) return false;
  return proposal.voters.length === 0 ? admin : proposal.voters.includes(voterId);
}

/** The realm was deleted, or is being deleted, under the vote: its proposal is gone with it. */
function realmGone(error: unknown): boolean {
  return isAppError(error) && (error.code === "conflict" || error.code === "not_found");
}

/** Where the proposal stands, its effect included, in words. */
function standing(proposal: Proposal): string {
  const effect = proposal.effect?.status;
  if (proposal.status !== "approved" || effect === undefined || effect === "none") {
    return `the proposal is ${proposal.status}`;
  }
  if (effect === "pending") {
    return "the proposal is approved and its effect pending: the service's recovery applies it, once, within a minute (council::get shows the outcome)";
  }
  if (effect === "applying") {
    return "the proposal is approved and its effect under way: the service records its outcome shortly (council::get shows it)";
  }
  return `the proposal is approved and its effect ${effect}`;
}
