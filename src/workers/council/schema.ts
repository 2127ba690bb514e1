import { z } from "zod";
import { looseEnum } from "../../shared/loose-enum.ts";
import { chainEntry, nextCursor, principalRecord } from "../../shared/outputs.ts";
import { pageFields } from "../../shared/pagination.ts";

export const PROPOSAL_KINDS = [
  "hire_agent",
  "terminate_agent",
  "budget_change",
  "strategy_change",
  "realm_suspend",
  "custom",
] as const;
export const PROPOSAL_STATUSES = ["pending", "approved", "rejected", "cancelled", "expired"] as const;
export const VOTES = ["for", "against", "abstain"] as const;
export const ACTOR_KINDS = ["agent", "human", "system"] as const;
/** What the council itself records of its proposals: no key's own entry may claim one of these. */
export const PROPOSAL_ACTIONS = [
  "proposal_submitted",
  "vote_cast",
  "proposal_approved",
  "proposal_rejected",
  "proposal_expired",
  "proposal_cancelled",
  "effect_applied",
  "effect_failed",
  "effect_interrupted",
] as const;

export type ProposalKind = (typeof PROPOSAL_KINDS)[number];
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number];
export type Vote = (typeof VOTES)[number];
export type ProposalAction = (typeof PROPOSAL_ACTIONS)[number];

export const DEFAULT_EXPIRY_MS = 7 * 24 * 3600_000;

export const EFFECT_STATUSES = ["pending", "applying", "applied", "failed", "interrupted", "none"] as const;
export type EffectStatus = (typeof EFFECT_STATUSES)[number];

/**
 * What an approved proposal did, applied at most once through the owning worker's function:
 * `pending` (approved, not yet taken), `applying` (taken by `claimedBy` at `claimedAt`: only that
 * claimant applies it), then `applied` with the result, `failed` with the reason, `none` (a kind that
 * does nothing), or `interrupted`: the claimant stopped before recording an outcome, so whether it
 * took effect is unknown and it is never run again.
 */
export const effectRecord = z.object({
  status: z.enum(EFFECT_STATUSES),
  functionId: z.string().optional(),
  result: z.unknown().optional(),
  error: z.string().optional(),
  /** The process that took the effect to apply it (host:pid), and when. */
  claimedBy: z.string().optional(),
  claimedAt: z.string().optional(),
  at: z.string().optional(),
});
export type Effect = z.infer<typeof effectRecord>;

export const proposalRecord = z.object({
  id: z.string(),
  realmId: z.string(),
  kind: z.enum(PROPOSAL_KINDS),
  title: z.string(),
  requestedBy: z.string(),
  payload: z.record(z.string(), z.unknown()).nullable(),
  status: z.enum(PROPOSAL_STATUSES),
  /** The realm's council members when it was submitted (empty: an admin key decides alone). */
  voters: z.array(z.string()),
  quorum: z.number(),
  /** Each voter's latest vote. */
  votes: z.record(z.string(), z.object({ vote: z.enum(VOTES), at: z.string() })),
  tally: z.object({ for: z.number(), against: z.number(), abstain: z.number() }),
  /** The key that submitted it: an effect never has more rights than it had. */
  submittedBy: principalRecord,
  effect: effectRecord.optional(),
  /** Why it was cancelled, as the canceller said. */
  reason: z.string().optional(),
  decidedAt: z.string().optional(),
  expiresAt: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  version: z.number(),
});
export type Proposal = z.infer<typeof proposalRecord>;

/** What a vote answers: the proposal, with a notice when the vote counted and something after it did not. */
export const voteAnswer = proposalRecord.extend({
  notice: z
    .string()
    .optional()
    .describe(
      "Set when the vote counted but recording what followed failed (its effect is then left to the recovery sweep), or when this same vote was already counted",
    ),
});

export const proposalPage = z.object({
  proposals: z.array(proposalRecord),
  count: z.number().describe("How many proposals match, over all pages"),
  nextCursor,
});

const activityFields = z.object({
  realmId: z.string(),
  actorKind: z.enum(ACTOR_KINDS),
  actorId: z.string(),
  action: z.string(),
  entityType: z.string(),
  entityId: z.string(),
  details: z.unknown().optional(),
});
export const activityEntry = chainEntry(activityFields);
export const activityPage = z.object({ entries: z.array(activityEntry), nextCursor });

const id = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .trim()
    .min(1, `${field} is required`)
    .max(256, `${field} must be at most 256 characters`);

export const submitInput = z.strictObject({
  realmId: id("realmId"),
  kind: looseEnum("kind", PROPOSAL_KINDS),
  title: z.string({ error: "title must be a string" }).trim().min(1, "title is required").max(500),
  requestedBy: id("requestedBy"),
  payload: z.record(z.string(), z.unknown(), { error: "payload must be an object" }).nullable().optional(),
  quorum: z.number({ error: "quorum must be an integer" }).int("quorum must be an integer").min(1).optional(),
  expiresInMs: z
    .number({ error: "expiresInMs must be an integer" })
    .int("expiresInMs must be an integer")
    .min(1000, "expiresInMs must be at least 1000")
    .max(365 * 24 * 3600_000, "expiresInMs must be at most a year")
    .optional(),
});
export type SubmitInput = z.output<typeof submitInput>;

export const voteInput = z.strictObject({
  realmId: id("realmId"),
  id: id("id"),
  voterId: id("voterId"),
  vote: looseEnum("vote", VOTES),
});

export const proposalInput = z.strictObject({ realmId: id("realmId"), id: id("id") });

export const cancelInput = z.strictObject({
  realmId: id("realmId"),
  id: id("id"),
  reason: z.string({ error: "reason must be a string" }).trim().max(2000).optional(),
});

export const proposalsInput = z.strictObject({
  realmId: id("realmId"),
  status: looseEnum("status", PROPOSAL_STATUSES).optional(),
  kind: looseEnum("kind", PROPOSAL_KINDS).optional(),
  ...pageFields,
});

export const activityInput = z.strictObject({
  realmId: id("realmId"),
  actorKind: looseEnum("actorKind", ACTOR_KINDS),
  actorId: id("actorId"),
  action: id("action"),
  entityType: id("entityType"),
  entityId: id("entityId"),
  details: z.unknown().optional(),
});
export type ActivityInput = z.output<typeof activityInput>;
export type ActivityFields = Omit<ActivityInput, "realmId"> & { realmId: string };

export const logInput = z.strictObject({
  realmId: id("realmId"),
  order: z.enum(["asc", "desc"], { error: "order must be asc or desc" }).optional(),
  ...pageFields,
});

export const realmInput = z.strictObject({ realmId: id("realmId") });

export const sweepResult = z.object({
  settled: z.number().describe("Pending effects claimed and applied (or failed) now"),
  interrupted: z.number().describe("Claims whose process stopped mid-effect, reported interrupted"),
  dropped: z.number().describe("Marks of effects with an outcome already, or of approvals never written"),
});
