import { z } from "zod";
import { nextCursor } from "../../shared/outputs.ts";
import { pageFields } from "../../shared/pagination.ts";

export const MAX_MEMBERS = 20;
export const MAX_MESSAGES = 500;
export const DEFAULT_DURATION_MS = 600_000;
export const DEFAULT_THRESHOLD = 0.66;
export const SWARM_STATUSES = ["active", "dissolved", "expired"] as const;
export type SwarmStatus = (typeof SWARM_STATUSES)[number];
export const MESSAGE_TYPES = ["observation", "proposal", "vote"] as const;
export const VOTES = ["for", "against", "abstain"] as const;

const id = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .trim()
    .min(1, `${field} is required`)
    .max(256, `${field} must be at most 256 characters`);

export const createInput = z.strictObject({
  goal: z.string({ error: "goal must be a string" }).trim().min(1, "goal is required").max(10_000),
  agentIds: z
    .array(id("agentIds"), { error: "agentIds must be an array of agent ids" })
    .min(1, "agentIds must name at least one agent")
    .max(MAX_MEMBERS, `a swarm has at most ${MAX_MEMBERS} members`)
    .refine((ids) => new Set(ids).size === ids.length, "agentIds must not repeat an agent"),
  maxDurationMs: z
    .number({ error: "maxDurationMs must be an integer" })
    .int("maxDurationMs must be an integer")
    .min(1000, "maxDurationMs must be at least 1000")
    .max(30 * 24 * 3600_000, "maxDurationMs must be at most 30 days")
    .default(DEFAULT_DURATION_MS),
  consensusThreshold: z
    .number({ error: "consensusThreshold must be a number" })
    .gt(0, "consensusThreshold must be above 0")
    .max(1, "consensusThreshold must be at most 1")
    .default(DEFAULT_THRESHOLD),
  realmId: id("realmId").optional(),
});

export const swarmIdInput = z.strictObject({ swarmId: id("swarmId") });

export const broadcastInput = z
  .strictObject({
    swarmId: id("swarmId"),
    agentId: id("agentId"),
    message: z.string({ error: "message must be a string" }).trim().min(1, "message is required").max(20_000),
    type: z.enum(MESSAGE_TYPES, { error: `type must be one of ${MESSAGE_TYPES.join(", ")}` }),
    vote: z.enum(VOTES, { error: `vote must be one of ${VOTES.join(", ")}` }).optional(),
  })
  .refine((input) => input.type !== "vote" || input.vote !== undefined, {
    path: ["vote"],
    message: "a vote message needs vote: for, against or abstain",
  });
export type BroadcastInput = z.output<typeof broadcastInput>;

export const consensusInput = z.strictObject({
  swarmId: id("swarmId"),
  proposal: z
    .string({ error: "proposal must be a string" })
    .trim()
    .min(1, "proposal is required")
    .max(20_000),
});

export const runInput = z.strictObject({
  swarmId: id("swarmId"),
  rounds: z.number().int("rounds must be an integer").min(1, "rounds must be at least 1").max(10).default(3),
});

export const listInput = z.strictObject({
  realmId: id("realmId").optional(),
  status: z.enum(SWARM_STATUSES, { error: `status must be one of ${SWARM_STATUSES.join(", ")}` }).optional(),
  ...pageFields,
});

export const purgeRealmInput = z.strictObject({ realmId: id("realmId") });

export const swarmRecord = z.object({
  swarmId: z.string(),
  realmId: z.string(),
  goal: z.string(),
  agentIds: z.array(z.string()),
  maxDurationMs: z.number(),
  consensusThreshold: z.number(),
  status: z.enum(SWARM_STATUSES),
  messageCount: z.number(),
  createdAt: z.string(),
  expiresAt: z.string(),
  endedAt: z.string().optional(),
});
export type Swarm = z.infer<typeof swarmRecord>;

export const swarmPage = z.object({
  swarms: z.array(swarmRecord),
  count: z.number().describe("How many swarms match, over all pages"),
  nextCursor,
});

export const swarmMessage = z.object({
  seq: z.number(),
  agentId: z.string(),
  message: z.string(),
  type: z.enum(MESSAGE_TYPES),
  vote: z.enum(VOTES).optional(),
  at: z.string(),
});
export type SwarmMessage = z.infer<typeof swarmMessage>;

/** What the swarm routes answer besides the swarm itself. */
export const broadcastAck = z.object({ acknowledged: z.boolean(), swarmId: z.string(), seq: z.number() });
export const consensusAnswer = z.object({
  proposal: z.string(),
  hasConsensus: z.boolean(),
  votesFor: z.number(),
  votesAgainst: z.number(),
  threshold: z.number(),
  totalVoters: z.number(),
});
export const collectAnswer = z.object({
  totalMessages: z.number(),
  observations: z.array(swarmMessage),
  proposals: z.array(swarmMessage),
  votes: z.array(swarmMessage),
  agents: z.record(z.string(), z.array(swarmMessage)).describe("Each member's messages"),
});
export const dissolveAnswer = z.object({
  swarmId: z.string(),
  status: z.enum(SWARM_STATUSES),
  messageCount: z.number(),
  archived: z.number().describe("Members whose findings were kept in their memory"),
});
export const swarmRunAnswer = z.object({
  swarmId: z.string(),
  rounds: z.number(),
  consensus: consensusAnswer,
  failures: z.array(z.object({ round: z.number(), agentId: z.string(), error: z.string() })),
});
