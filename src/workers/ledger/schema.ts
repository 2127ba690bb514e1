import { z } from "zod";
import { isStorableText } from "../../engine/state/schema.ts";
import { round6 } from "./money.ts";

/**
 * Ids and labels become state keys and breakdown keys (state::update path segments), so they must be
 * storable text, fit a path segment (256 bytes at most) and not name an object's prototype plumbing.
 */
const RESERVED = new Set(["__proto__", "constructor", "prototype"]);

/**
 * Bounds on what one spend may add: each label is a breakdown key of the running totals (and a state
 * key), so it must stay short; token counts stay far below 2^53 however many spends are summed.
 */
export const MAX_LABEL_CHARS = 200;
export const MAX_TOKENS = 1_000_000_000;

/** "x is required" when absent, "x must be a <kind>" when of the wrong type. */
const typeError = (field: string, kind: string) => (issue: { input: unknown }) =>
  issue.input === undefined ? `${field} is required` : `${field} must be ${kind}`;

const label = (field: string, maxBytes = 256) =>
  z
    .string({ error: typeError(field, "a string") })
    .min(1, `${field} must not be empty`)
    .max(MAX_LABEL_CHARS, `${field} must be at most ${MAX_LABEL_CHARS} characters`)
    .refine((text) => Buffer.byteLength(text) <= maxBytes, `${field} must be at most ${maxBytes} bytes`)
    .refine(isStorableText, `${field} must be valid text without NUL`)
    .refine((text) => !RESERVED.has(text), `${field} must not be __proto__, constructor or prototype`);
/** A realm id is part of state scope names (at most 256 characters with their prefix). */
const realmId = label("realmId", 200);

const count = (field: string, max?: number) =>
  z
    .number({ error: typeError(field, "a number") })
    .int(`${field} must be an integer`)
    .min(0, `${field} must be 0 or more`)
    .max(
      max ?? Number.MAX_SAFE_INTEGER,
      max === undefined ? `${field} is too large` : `${field} must be at most ${max}`,
    );

/** One spend may cost up to $10M: running totals are kept in integer micro-cents, exact below 2^53. */
export const MAX_COST_CENTS = 1_000_000_000;

export const setBudgetInput = z.strictObject({
  realmId,
  agentId: label("agentId").optional(),
  monthlyCents: count("monthlyCents"),
  softThreshold: z
    .number({ error: typeError("softThreshold", "a number") })
    .min(0, "softThreshold must be between 0 and 1")
    .max(1, "softThreshold must be between 0 and 1")
    .optional(),
  hardLimit: z.boolean({ error: typeError("hardLimit", "a boolean") }).optional(),
  /** null clears the billing code; omitted keeps it. */
  billingCode: label("billingCode").nullable().optional(),
  /** The budget's version the caller read: a stale one fails with 409 instead of overwriting. */
  expectedVersion: count("expectedVersion").optional(),
});
export type SetBudgetInput = z.infer<typeof setBudgetInput>;

export const checkInput = z.strictObject({ realmId, agentId: label("agentId") });

const spendFields = {
  realmId,
  agentId: label("agentId"),
  // Cents, fractions allowed (an LLM call costs fractions of a cent), kept to 6 decimal places.
  costCents: z
    .number({ error: typeError("costCents", "a number") })
    .min(0, "costCents must be 0 or more")
    .max(MAX_COST_CENTS, `costCents must be at most ${MAX_COST_CENTS}`)
    .transform(round6),
  provider: label("provider"),
  model: label("model"),
  inputTokens: count("inputTokens", MAX_TOKENS),
  outputTokens: count("outputTokens", MAX_TOKENS),
  missionId: label("missionId").optional(),
  billingCode: label("billingCode").optional(),
  /** Idempotency key: a spend with an eventId already seen is not counted again. */
  eventId: label("eventId").optional(),
};

/** `POST /api/ledger/spend`: strict, an unknown field is a 400 naming it. */
export const spendInput = z.strictObject(spendFields);
/**
 * `ledger::record_cost` and the `cost.incurred` subscription: model-call cost messages carry more than a
 * spend (sessionId, cost in dollars, at), handed over whole; unknown keys are dropped.
 */
export const costInput = z.object({
  ...spendFields,
  /** Set by the service's own publishers once the cost is recorded: the subscription has nothing to do. */
  recorded: z.boolean().optional(),
});
/** What the `cost.incurred` subscription reads of a message before handing it to record_cost. */
export const costMessage = z.looseObject({ recorded: z.boolean().optional() });
export type SpendInput = z.infer<typeof spendInput>;

export const groupByValues = ["agent", "model", "provider", "billing_code"] as const;
export type GroupBy = (typeof groupByValues)[number];

export const summaryInput = z.strictObject({
  realmId,
  groupBy: z
    .enum(groupByValues, { error: `groupBy must be one of ${groupByValues.join(", ")}` })
    .default("agent"),
  period: z
    .string({ error: typeError("period", "a string") })
    .regex(/^\d{4}-(0[1-9]|1[0-2])$/, "period must be a month written YYYY-MM")
    .optional(),
});

export const purgeInput = z.strictObject({ realmId });
export const purgeAgentInput = z.strictObject({ realmId, agentId: label("agentId") });

export const alertLevels = ["Warning", "Critical"] as const;
export type AlertLevel = (typeof alertLevels)[number];

export const budgetRecord = z.object({
  id: z.string(),
  realmId: z.string(),
  agentId: z.string().optional(),
  monthlyCents: z.number(),
  spentCents: z.number(),
  softThreshold: z.number(),
  hardLimit: z.boolean(),
  billingCode: z.string().optional(),
  version: z.number(),
  /** Start of the UTC calendar month the spentCents belong to. */
  periodStart: z.string(),
  updatedAt: z.string(),
  /** Set (by the spend that crossed the soft threshold) once soft_threshold was published this period. */
  softAlert: z.object({ at: z.string(), spendId: z.string() }).optional(),
});
export type Budget = z.infer<typeof budgetRecord>;

export type BudgetScope = "agent" | "realm";

export const checkResult = z.object({
  allowed: z.boolean(),
  spentCents: z.number(),
  limitCents: z.number(),
  remainingCents: z.number(),
  utilizationPct: z.number(),
  alert: z.enum(alertLevels).nullable(),
  scope: z.enum(["agent", "realm"]).nullable().describe("Whose budget is the tighter one; null: no budget"),
  budgetId: z.string().nullable(),
  reason: z.string().optional(),
});
export type CheckResult = z.infer<typeof checkResult>;

export const spendEvent = z.object({
  id: z.string(),
  realmId: z.string(),
  agentId: z.string(),
  costCents: z.number(),
  provider: z.string(),
  model: z.string(),
  inputTokens: z.number(),
  outputTokens: z.number(),
  missionId: z.string().optional(),
  billingCode: z.string().optional(),
  eventId: z.string().optional(),
  timestamp: z.string(),
  /** pending: only while the first delivery of an eventId is still being processed. */
  status: z.enum(["accepted", "rejected", "pending"]),
  /** Rejected events: the refusal message. */
  reason: z.string().optional(),
});
export type SpendEvent = z.infer<typeof spendEvent>;

export const summaryAnswer = z.object({
  totalCents: z.number(),
  totalInputTokens: z.number(),
  totalOutputTokens: z.number(),
  eventCount: z.number(),
  breakdown: z
    .record(z.string(), z.number())
    .describe("Cents by the asked group (agent, model, provider, billing code)"),
});
