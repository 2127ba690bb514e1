import { z } from "zod";
import { MAX_SESSION_ID_LENGTH } from "../../shared/limits.ts";
import { nextCursor } from "../../shared/outputs.ts";
import { pageFields } from "../../shared/pagination.ts";

export const BINDINGS_SCOPE = "channel_agents";
const text = (field: string, max = 256) =>
  z
    .string({ error: `${field} must be a string` })
    .trim()
    .min(1, `${field} is required`)
    .max(max, `${field} must be at most ${max} characters`)
    .refine(
      (value) => ![...value].some((c) => c.charCodeAt(0) < 32),
      `${field} must not contain control characters`,
    );

/** A platform name (`slack`, …) or `webhook` for the generic route. */
export const platformField = text("platform", 64).refine(
  (value) => /^[a-z0-9_-]+$/.test(value),
  "platform is lower-case letters, digits, _ and -",
);

export const bindInput = z
  .strictObject({
    platform: platformField,
    channelId: text("channelId", 512),
    agentId: text("agentId"),
  })
  // The channel's turns run in the session `<platform>:<channelId>`: a longer one could never be answered.
  .refine(({ platform, channelId }) => platform.length + 1 + channelId.length <= MAX_SESSION_ID_LENGTH, {
    message: `channelId: "<platform>:<channelId>" names the channel's session, at most ${MAX_SESSION_ID_LENGTH} characters`,
    path: ["channelId"],
  });
export const listBindingsInput = z.strictObject({
  realmId: text("realmId").optional(),
  platform: platformField.optional(),
  ...pageFields,
});
export const unbindInput = z.strictObject({ platform: platformField, channelId: text("channelId", 512) });

export const bindingRecord = z.object({
  platform: z.string(),
  channelId: z.string(),
  agentId: z.string(),
  realmId: z.string(),
  createdAt: z.string(),
});
export type Binding = z.infer<typeof bindingRecord>;
/**
 * A binding as stored. DESIGN lets bindings be written directly (`state::set` in `channel_agents`) as
 * just `{agentId}`: everything else is then derived (the realm from the agent, the rest from the key).
 */
export const storedBinding = z.looseObject({
  agentId: z.string().min(1),
  realmId: z.string().min(1).optional(),
  createdAt: z.string().optional(),
});
export const bindAnswer = bindingRecord.extend({
  warnings: z
    .array(z.string())
    .describe(
      "Vault entries the channel needs that are missing (the binding is made anyway), e.g. the token replies are sent with",
    ),
});
export const bindingPage = z.object({ bindings: z.array(bindingRecord), nextCursor });

/** A message on its way through the queue: the agent's turn, then the reply's delivery. */
export const channelJob = z.object({
  id: z.string(),
  platform: z.string(),
  realmId: z.string(),
  agentId: z.string(),
  sessionId: z.string(),
  /** turn: run the agent on `text`; deliver: send `reply` (parts from `delivered` on). */
  phase: z.enum(["turn", "deliver"]),
  text: z.string(),
  replyTo: z.record(z.string(), z.unknown()),
  /** An agent's own message (`channel::send`), not a reply: some platforms deliver it only with the channel's own credential. */
  unprompted: z.boolean().optional(),
  reply: z.string().optional(),
  delivered: z.number().optional(),
  attempts: z.number(),
  lastError: z.string().optional(),
  /** Set while a node works on it (its entry is then the lease). */
  leased: z.boolean().optional(),
  createdAt: z.string(),
  /** Failed jobs: when it was given up. */
  failedAt: z.string().optional(),
});
export type ChannelJob = z.infer<typeof channelJob>;
export const failedAnswer = z.object({ failed: z.array(channelJob).describe("Oldest first") });

export const bindingKey = (platform: string, channelId: string) => `${platform}:${channelId}`;

/** What the generic webhook reads of its JSON (or form) body: the first non-empty of message, text, content. */
export const genericWebhookBody = z
  .looseObject({
    message: z.string().optional().describe("The message for the agent (text and content are read too)"),
    text: z.string().optional(),
    content: z.string().optional(),
    callback_url: z.string().optional().describe("Where the answer is also POSTed as {text} (SSRF rule)"),
    response_url: z.string().optional().describe("As callback_url"),
  })
  .describe("A JSON object or form fields");
