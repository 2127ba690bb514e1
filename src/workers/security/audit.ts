import type { z } from "zod";
import type { StateClient } from "../../engine/state/client.ts";
import { badRequest, describeZodError } from "../../shared/errors.ts";
import { type ChainEntry, HashChain, type VerifyResult } from "../../shared/hash-chain.ts";
import { type AuditEvent, type AuditInput, type AuditQuery, auditInput, type auditPage } from "./schema.ts";

/** One service-wide chain. Realm-scoped logs (council activity) keep chains of their own. */
export const AUDIT_CHAIN = { scope: "audit", headScope: "audit_head", chainId: "main" } as const;

export type AuditEntry = ChainEntry<AuditInput>;

export type AuditPage = z.infer<typeof auditPage>;

function auditChain(state: StateClient): HashChain<AuditInput> {
  return new HashChain<AuditInput>(state, AUDIT_CHAIN);
}

export function recordAudit(state: StateClient, input: AuditInput): Promise<AuditEntry> {
  return auditChain(state).append(input);
}

/** A published event becomes a record; members other than type/agentId/detail are kept in detail. */
export function eventToAuditInput(event: AuditEvent): AuditInput {
  const { type, agentId, detail, ...extra } = event;
  const merged = { ...extra, ...(detail ?? {}) };
  const parsed = auditInput.safeParse({
    type,
    agentId: agentId ?? undefined,
    detail: Object.keys(merged).length > 0 ? merged : undefined,
  });
  if (!parsed.success) throw badRequest(describeZodError(parsed.error));
  return parsed.data;
}

/**
 * Newest first unless `order: "asc"`. Each call examines at most `maxScan` entries, so a filter
 * that rarely matches returns a short (even empty) page with a cursor rather than walking the log.
 */
export async function queryAudit(
  state: StateClient,
  query: AuditQuery,
  options: { maxScan?: number } = {},
): Promise<AuditPage> {
  const page = await auditChain(state).read({
    order: query.order,
    limit: query.limit,
    cursor: query.cursor,
    since: query.from === undefined ? undefined : new Date(query.from).toISOString(),
    until: query.to === undefined ? undefined : new Date(query.to).toISOString(),
    filter: (entry) =>
      (query.type === undefined || entry.type === query.type) &&
      (query.agentId === undefined || entry.agentId === query.agentId),
    maxScan: options.maxScan,
  });
  return { entries: page.entries, count: page.entries.length, nextCursor: page.nextCursor };
}

export function verifyAudit(state: StateClient): Promise<VerifyResult> {
  return auditChain(state).verify();
}
