import type { Principal } from "../../engine/types.ts";
import { isPrivileged } from "../../shared/access.ts";
import { conflict, forbidden } from "../../shared/errors.ts";
import type { Proposal, Vote } from "./schema.ts";

/** Default quorum: a strict majority of the voters. */
export function defaultQuorum(voters: number): number {
  return Math.floor(voters / 2) + 1;
}

/** Each voter's latest vote, counted. */
export function tallyOf(votes: Proposal["votes"]): Proposal["tally"] {
  const tally = { for: 0, against: 0, abstain: 0 };
  for (const { vote } of Object.values(votes)) tally[vote]++;
  return tally;
}

/**
 * The status the votes give: approved once `for` reaches the quorum; rejected once it no longer can
 * (every voter not voting against could still turn to `for`, since the latest vote counts); else
 * still pending. With no council members an admin decides alone: `for` approves, `against` rejects.
 */
export function outcome(proposal: Proposal): Proposal["status"] {
  const { tally, voters, quorum } = proposal;
  if (voters.length === 0) return tally.for > 0 ? "approved" : tally.against > 0 ? "rejected" : "pending";
  if (tally.for >= quorum) return "approved";
  if (voters.length - tally.against < quorum) return "rejected";
  return "pending";
}

/** A pending proposal past its time is expired; `now` in ms. */
export function isExpired(proposal: Proposal, now: number): boolean {
  return proposal.status === "pending" && Date.parse(proposal.expiresAt) <= now;
}

/**
 * The proposal with this vote counted, or a refusal: only pending proposals not past their time take
 * votes, only council members vote (with no members, only an admin key decides).
 */
export function withVote(
  proposal: Proposal,
  voterId: string,
  vote: Vote,
  admin: boolean,
  now: string,
): Proposal {
  if (proposal.status !== "pending") {
    throw conflict(`Proposal ${proposal.id} is already ${proposal.status}: votes are closed`);
  }
  // Checked on the value being written: a proposal read just before its time ran out takes no late vote.
  if (isExpired(proposal, Date.parse(now))) {
    throw conflict(`Proposal ${proposal.id} expired at ${proposal.expiresAt}: votes are closed`);
  }
  if (proposal.voters.length === 0 && !admin) {
    throw forbidden(
      `Realm ${proposal.realmId} has no council members (hierarchy nodes with the capability "council"): only an admin key decides`,
    );
  }
  if (proposal.voters.length > 0 && !proposal.voters.includes(voterId)) {
    throw forbidden(
      `${voterId} is not a council member of realm ${proposal.realmId} (members: ${proposal.voters.join(", ")})`,
    );
  }
  const votes = { ...proposal.votes, [voterId]: { vote, at: now } };
  const counted: Proposal = {
    ...proposal,
    votes,
    tally: tallyOf(votes),
    updatedAt: now,
    version: proposal.version + 1,
  };
  const status = outcome(counted);
  if (status === "pending") return counted;
  return {
    ...counted,
    status,
    decidedAt: now,
    ...(status === "approved" ? { effect: effectOf(proposal, now) } : {}),
  };
}

/**
 * An approved proposal's effect: pending, to be claimed and applied; a `custom` proposal has none to
 * apply, so it is settled at once and nothing is left to recover.
 */
function effectOf(proposal: Proposal, now: string): NonNullable<Proposal["effect"]> {
  return proposal.kind === "custom" ? { status: "none", at: now } : { status: "pending" };
}

/**
 * The proposal cancelled, or a refusal: only a pending proposal, and only by the key that submitted it
 * or an admin key (or the service, which withdraws a tool call's proposal once the call is decided).
 */
export function withCancel(
  proposal: Proposal,
  by: Principal,
  reason: string | undefined,
  now: string,
): Proposal {
  if (proposal.status !== "pending") {
    throw conflict(`Proposal ${proposal.id} is already ${proposal.status}: it cannot be cancelled`);
  }
  if (!isPrivileged(by) && !sameKey(proposal.submittedBy, by)) {
    throw forbidden(`Only the key that submitted proposal ${proposal.id}, or an admin key, may cancel it`);
  }
  return {
    ...proposal,
    status: "cancelled",
    ...(reason ? { reason } : {}),
    decidedAt: now,
    updatedAt: now,
    version: proposal.version + 1,
  };
}

function sameKey(submitter: Proposal["submittedBy"], by: Principal): boolean {
  return submitter.kind === "realm" && by.kind === "realm" && submitter.keyId === by.keyId;
}
