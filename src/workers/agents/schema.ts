import { z } from "zod";
import { isStorableText } from "../../engine/state/schema.ts";
import { INTERNAL_FUNCTIONS_TEXT, namesOnlyInternal } from "../../shared/internal-functions.ts";
import {
  boundedJsonObject,
  MAX_METADATA_BYTES,
  MAX_SESSION_ID_LENGTH,
  MAX_TURN_CONTEXT_BYTES,
} from "../../shared/limits.ts";
import { nextCursor } from "../../shared/outputs.ts";
import { pageFields } from "../../shared/pagination.ts";
import { queryInt } from "../../shared/query-int.ts";

export const toolProfiles = ["chat", "code", "research", "ops", "data", "full"] as const;
export type ToolProfile = (typeof toolProfiles)[number];

/** Function-id patterns each profile grants (reference/catalog.json toolProfiles). */
export const profilePatterns: Record<ToolProfile, string[]> = {
  chat: ["tool::web_search", "tool::web_fetch", "memory::recall", "memory::store"],
  code: ["tool::file_*", "tool::shell_exec", "tool::code_*", "tool::apply_patch"],
  research: ["tool::web_*", "tool::browser_*", "memory::*"],
  ops: ["tool::shell_exec", "tool::system_*", "tool::process_*", "tool::disk_*", "tool::network_*"],
  data: ["tool::json_*", "tool::csv_*", "tool::yaml_*", "tool::regex_*", "tool::file_*"],
  full: ["tool::*", "memory::*"],
};

const functionPattern = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[A-Za-z0-9_.\-:*]+$/, "must be a function id or pattern (letters, digits, _ . - : and *)");

export { DEFAULT_REALM_ID as DEFAULT_REALM } from "../../shared/access.ts";

/** Agents' tools may not name the service's internal functions (see isInternalFunction in tools.ts). */
const toolPattern = functionPattern.refine((pattern) => !namesOnlyInternal(pattern), {
  message: `must not name an internal function (${INTERNAL_FUNCTIONS_TEXT})`,
});

const domainName = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(
    /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/,
    "must be a host name such as registry.npmjs.org (its subdomains are allowed too)",
  );

/**
 * Network for the agent's programs (shell_exec, tests, package installs): only through the service's
 * proxy, which applies the SSRF rule to every connection, to any public host or to `allowDomains` and
 * their subdomains. Absent or null: none at all.
 */
const egressGrant = z.strictObject({
  allowDomains: z.array(domainName).min(1).max(100).optional(),
});

export const createAgentInput = z.strictObject({
  name: z
    .string()
    .trim()
    .min(1, "name is required")
    .max(200)
    .refine(isStorableText, "name must be valid text without NUL"),
  description: z.string().max(4000).optional(),
  model: z.string().min(1).max(256).optional(),
  systemPrompt: z.string().max(32_768).optional(),
  tools: z.array(toolPattern).max(100).optional(),
  toolProfile: z.enum(toolProfiles).default("chat"),
  capabilities: z.array(functionPattern).max(100).optional(),
  temperature: z
    .number()
    .min(0, "temperature must be between 0 and 2")
    .max(2, "temperature must be between 0 and 2")
    .optional(),
  maxTokens: z.number().int().min(1).max(1_000_000).optional(),
  /** Models tried in order when the agent's model fails (ids or aliases). */
  fallbackModels: z.array(z.string().min(1).max(256)).max(5).optional(),
  embeddingModel: z
    .string()
    .trim()
    .min(1, "embeddingModel must not be empty (null: none)")
    .max(512)
    .nullable()
    .optional()
    .describe(
      "The embedding model its memory is recalled by meaning with: a catalog id, an alias or <provider>/<model> (GET /api/models/embeddings); null: none (AGENTOS_EMBEDDING_MODEL applies when set)",
    ),
  realmId: z.string().min(1).max(256).optional(),
  metadata: boundedJsonObject("metadata", MAX_METADATA_BYTES).optional(),
  /**
   * Per tool (function-id pattern): `approval: "required"` makes the agent's calls of that tool that
   * change the outside world wait for an admin's decision (the most specific pattern wins).
   */
  toolPolicies: z
    .record(functionPattern, z.strictObject({ approval: z.enum(["required", "none"]) }))
    .refine((policies) => Object.keys(policies).length <= 100, "toolPolicies may name at most 100 patterns")
    .optional(),
  egress: egressGrant.nullable().optional(),
});
export type CreateAgentInput = z.infer<typeof createAgentInput>;

/** The fields of an agent that may change (not its name or realm: declarative files key agents by them). */
export const updateAgentInput = createAgentInput
  .omit({ name: true, realmId: true, toolProfile: true })
  .partial()
  .extend({ id: z.string().min(1).max(256), toolProfile: z.enum(toolProfiles).optional() });
export type UpdateAgentInput = z.infer<typeof updateAgentInput>;

/** A stored agent, as every agent route answers it. */
export const agentRecord = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().optional(),
  model: z.string(),
  systemPrompt: z.string().optional(),
  tools: z.array(z.string()),
  toolProfile: z.enum(toolProfiles),
  capabilities: z.array(z.string()).optional(),
  temperature: z.number().optional(),
  maxTokens: z.number().optional(),
  fallbackModels: z.array(z.string()).optional(),
  embeddingModel: z
    .string()
    .nullable()
    .optional()
    .describe("The agent's own embedding model; absent or null: AGENTOS_EMBEDDING_MODEL when set, else none"),
  toolPolicies: z.record(z.string(), z.object({ approval: z.enum(["required", "none"]) })).optional(),
  egress: z
    .object({ allowDomains: z.array(z.string()).optional() })
    .nullable()
    .optional()
    .describe("Network for the agent's programs through the guarding proxy; absent or null: none"),
  realmId: z.string(),
  /** `deleting` while a delete is under way (a failed one leaves it so until retried). */
  status: z.enum(["active", "paused", "terminated", "deleting"]),
  metadata: z.record(z.string(), z.unknown()).optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Agent = z.infer<typeof agentRecord>;

export const agentIdInput = z.strictObject({ id: z.string().min(1).max(256) });

/**
 * Extra context for this turn only (a pulse tick's snapshot, a workflow's data): a JSON object, put
 * into the system prompt so the model sees it, and not stored in the session.
 */
const turnContext = boundedJsonObject("context", MAX_TURN_CONTEXT_BYTES);

/** Stored in the session and memory, so it must be storable text (PostgreSQL text cannot hold NUL). */
const message = z
  .string({ error: "message must be a string" })
  .min(1, "message is required")
  // Its own words: the schema's `error` above would otherwise answer a message too long as not a string.
  .max(200_000, "message must be at most 200000 characters")
  .refine(isStorableText, "message must be valid text without NUL or unpaired surrogates");

const sessionId = z
  .string({ error: "sessionId must be a string" })
  .min(1, "sessionId must not be empty")
  .max(MAX_SESSION_ID_LENGTH, `sessionId must be at most ${MAX_SESSION_ID_LENGTH} characters`)
  .refine(isStorableText, "sessionId must be valid text without NUL or unpaired surrogates");

export const chatInput = z.strictObject({
  agentId: z.string().min(1).max(256),
  message,
  sessionId: sessionId.optional(),
  context: turnContext.optional(),
});

export const messageRouteInput = z.strictObject({
  id: z.string().min(1).max(256),
  message,
  sessionId: sessionId.optional(),
  context: turnContext.optional(),
  /** Answer with server-sent events as the turn happens (also asked by `Accept: text/event-stream`). */
  stream: z.boolean().optional(),
});

/** agent::resolve: an agent id or name, as `/v1/chat/completions` gets it in `model`. */
export const resolveInput = z.strictObject({ model: z.string().min(1).max(512) });

/** agent::list: every agent the caller may see, or those of one realm. */
export const listInput = z.strictObject({ realmId: z.string().min(1).max(256).optional(), ...pageFields });
export const sessionsInput = z.strictObject({ id: z.string().min(1).max(256), ...pageFields });

/** One session and a page of its messages, oldest first. */
export const sessionInput = z.strictObject({
  id: z.string().min(1).max(256),
  sessionId,
  ...pageFields,
});

export const purgeRealmInput = z.strictObject({ realmId: z.string().min(1).max(256) });

export const memoryListRouteInput = z.strictObject({
  id: z.string().min(1).max(256),
  limit: queryInt("limit", 1, 200).default(50),
  cursor: z.string().min(1).max(512).optional(),
});

export const memoryDeleteRouteInput = z.strictObject({
  id: z.string().min(1).max(256),
  memoryId: z.string().min(1).max(256),
});

/** The agent answering a whole conversation (AI SDK model messages), without a session. */
export const completeInput = z.strictObject({
  agentId: z.string().min(1).max(256),
  messages: z.array(z.record(z.string(), z.unknown())).min(1, "messages must not be empty").max(1000),
  system: z.string().max(200_000).optional(),
  temperature: z.number().min(0).max(2).optional(),
  maxTokens: z.number().int().min(1).max(1_000_000).optional(),
  /** false: answer without the agent's tools. */
  withTools: z.boolean().optional(),
  /** Keep the exchange in a session, the one this conversation continues (see threads.ts). */
  keep: z.boolean().optional(),
});

export const authorizeInput = z.strictObject({
  agentId: z.string().min(1).max(256),
  functionIds: z.array(z.string().min(1).max(256)).max(500),
});

/** What the agent routes answer (the OpenAPI document's response schemas; see http/output-check.ts). */
const usage = z.object({ inputTokens: z.number(), outputTokens: z.number(), totalTokens: z.number() });
const toolCall = z.object({
  toolCallId: z.string(),
  toolName: z.string(),
  input: z.unknown(),
  output: z.unknown().optional(),
});

export const agentCreated = z.object({ id: z.string() });
export const agentPage = z.object({ agents: z.array(agentRecord), nextCursor });
export const agentWithTools = agentRecord.extend({
  resolvedTools: z.array(z.string()).describe("The functions the agent's tools name now"),
});
export const messageReply = z.object({
  content: z.string(),
  model: z.string(),
  usage,
  sessionId: z.string(),
  toolCalls: z.array(toolCall),
});

/** A whole conversation answered without a session (agent::complete, the `/v1` agent models). */
export const completionReply = z.object({
  content: z.string(),
  model: z.string(),
  usage,
  finishReason: z.string(),
  toolCalls: z.array(toolCall),
  sessionId: z.string().optional(),
});
export const agentResolved = z.object({ agentId: z.string() });
export const authorizeVerdict = z.object({ denied: z.array(z.string()) });

export const sessionRecord = z.object({
  id: z.string(),
  agentId: z.string(),
  title: z.string(),
  messageCount: z.number(),
  createdAt: z.string(),
  updatedAt: z.string(),
  metadata: z.record(z.string(), z.unknown()),
});
export const storedMessage = z.object({
  role: z.enum(["user", "assistant"]),
  content: z.string(),
  createdAt: z.string(),
  /** The tools the agent called to give this answer, in order, with what each returned. */
  toolCalls: z.array(toolCall).optional(),
});
export const sessionPage = z.object({ sessions: z.array(sessionRecord), nextCursor });
export const sessionWithMessages = z.object({
  session: sessionRecord,
  messages: z.array(storedMessage),
  nextCursor,
});

export const memoryEntry = z.object({
  id: z.string(),
  agentId: z.string(),
  sessionId: z.string().nullable(),
  role: z.enum(["user", "assistant", "system", "tool", "note"]),
  content: z.string(),
  createdAt: z.string(),
});
export const memoryPage = z.object({ memories: z.array(memoryEntry), nextCursor });
export const memoryCleared = z.object({ deleted: z.number() });
