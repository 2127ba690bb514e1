import { z } from "zod";

export const MAX_MEMBERS = 20;
export const MAX_MESSAGES = 500;
export const DEFAULT_DURATION_MS = 600_000;
export const DEFAULT_THRESHOLD = 0.66;
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

export const purgeRealmInput = z.strictObject({ realmId: id("realmId") });

export type SwarmStatus = "active" | "dissolved" | "expired";

export interface Swarm {
  swarmId: string;
  realmId: string;
  goal: string;
  agentIds: string[];
  maxDurationMs: number;
  consensusThreshold: number;
  status: SwarmStatus;
  messageCount: number;
  createdAt: string;
  expiresAt: string;
  endedAt?: string;
}

export interface SwarmMessage {
  seq: number;
  agentId: string;
  message: string;
  type: (typeof MESSAGE_TYPES)[number];
  vote?: (typeof VOTES)[number];
  at: string;
}
