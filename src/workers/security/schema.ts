import { z } from "zod";
import { chainEntry, nextCursor } from "../../shared/outputs.ts";
import { queryInt } from "../../shared/query-int.ts";

/** Serialized size limit of `detail`: the audit log records facts, not payloads. */
export const MAX_DETAIL_BYTES = 16 * 1024;

const auditType = z.string().min(1, "type must not be empty").max(128);
const agentId = z.string().min(1).max(256);
const detail = z
  .record(z.string(), z.unknown())
  .refine(
    (value) => Buffer.byteLength(JSON.stringify(value)) <= MAX_DETAIL_BYTES,
    `detail must be at most ${MAX_DETAIL_BYTES} bytes once serialized`,
  );

export const auditInput = z.strictObject({
  type: auditType,
  agentId: agentId.optional(),
  detail: detail.optional(),
});
export type AuditInput = z.infer<typeof auditInput>;

/**
 * Messages published on topic `audit`. Publishers are many and loosely coordinated, so this one is
 * lenient: other top-level members are kept in `detail` instead of failing (and losing) the record.
 */
export const auditEventInput = z.looseObject({
  type: auditType,
  agentId: agentId.nullish(),
  detail: z.record(z.string(), z.unknown()).nullish(),
});
export type AuditEvent = z.infer<typeof auditEventInput>;

const isoTimestamp = z.iso.datetime({ offset: true });

export const MAX_QUERY_LIMIT = 500;

export const auditQueryInput = z
  .strictObject({
    type: auditType.optional(),
    agentId: agentId.optional(),
    /** Inclusive bounds on the entry timestamp. */
    from: isoTimestamp.optional(),
    to: isoTimestamp.optional(),
    /** desc (default): newest first. */
    order: z.enum(["asc", "desc"]).default("desc"),
    // Query strings arrive as text over HTTP.
    limit: queryInt("limit", 1, MAX_QUERY_LIMIT).default(100),
    cursor: z
      .string()
      .regex(/^\d{1,20}$/, "cursor: not a cursor returned by this listing")
      .optional(),
  })
  .refine((query) => !query.from || !query.to || Date.parse(query.from) <= Date.parse(query.to), {
    message: "from must not be after to",
    path: ["from"],
  });
export type AuditQuery = z.infer<typeof auditQueryInput>;

export const auditVerifyInput = z.strictObject({});

/** What the audit routes answer. */
export const auditEntry = chainEntry(
  z.object({
    type: z.string(),
    agentId: z.string().optional(),
    detail: z.record(z.string(), z.unknown()).optional(),
  }),
);
export const auditPage = z.object({
  entries: z.array(auditEntry),
  count: z.number().describe("Entries on this page"),
  nextCursor,
});
