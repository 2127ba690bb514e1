import type { z } from "zod";
import type { StateClient } from "../../engine/state/client.ts";
import type { BatchOp } from "../../engine/state/types.ts";
import type { UpdateOp } from "../../engine/state/update-ops.ts";
import { fromMicros, periodKey, toMicros } from "./money.ts";
import type { GroupBy, SpendEvent, summaryAnswer } from "./schema.ts";

/**
 * Running totals per realm, all-time (`all`) and per UTC month (`YYYY-MM`), so a summary reads one
 * record however many spends there were. Money is counted in integer micro-cents: state::update adds
 * integers exactly, where adding fractional cents would drift.
 */
export const totalsScope = (realmId: string) => `ledger_totals:${realmId}`;
export const ALL_TIME = "all";

const GROUP_FIELD: Record<GroupBy, string> = {
  agent: "byAgent",
  model: "byModel",
  provider: "byProvider",
  billing_code: "byBillingCode",
};

export interface Totals {
  totalMicroCents?: number;
  totalInputTokens?: number;
  totalOutputTokens?: number;
  eventCount?: number;
  byAgent?: Record<string, number>;
  byModel?: Record<string, number>;
  byProvider?: Record<string, number>;
  byBillingCode?: Record<string, number>;
}

export type Summary = z.infer<typeof summaryAnswer>;

/** Atomic increments (no read-modify-write): array paths keep ids containing dots intact. */
function incrementOps(event: SpendEvent): Array<UpdateOp & { type: "increment" }> {
  const micros = toMicros(event.costCents);
  const groups: Record<GroupBy, string> = {
    agent: event.agentId,
    model: event.model,
    provider: event.provider,
    billing_code: event.billingCode ?? "none",
  };
  return [
    { type: "increment", path: "totalMicroCents", by: micros },
    { type: "increment", path: "totalInputTokens", by: event.inputTokens },
    { type: "increment", path: "totalOutputTokens", by: event.outputTokens },
    { type: "increment", path: "eventCount", by: 1 },
    ...Object.entries(groups).map(([group, name]): UpdateOp & { type: "increment" } => {
      return { type: "increment", path: [GROUP_FIELD[group as GroupBy], name], by: micros };
    }),
  ];
}

/**
 * The all-time and monthly totals' increments of accepted spends (of one realm), for their own
 * transaction: one update of each record however many spends there are.
 */
export function totalsOps(events: SpendEvent[]): BatchOp[] {
  // Per record, one increment per field however many spends: the sums are exact (integers).
  const byKey = new Map<string, Map<string, UpdateOp & { type: "increment" }>>();
  for (const event of events) {
    for (const key of [ALL_TIME, periodKey(Date.parse(event.timestamp))]) {
      const fields = byKey.get(key) ?? new Map<string, UpdateOp & { type: "increment" }>();
      byKey.set(key, fields);
      for (const op of incrementOps(event)) {
        const field = JSON.stringify(op.path);
        const sum = fields.get(field);
        fields.set(field, sum ? { ...sum, by: sum.by + op.by } : op);
      }
    }
  }
  const scope = events[0] ? totalsScope(events[0].realmId) : "";
  return [...byKey].map(
    ([key, fields]): BatchOp => ({ type: "update", scope, key, ops: [...fields.values()] }),
  );
}

/** The summary of a realm for one month, or all time when `period` is absent. */
export async function summarize(
  state: StateClient,
  realmId: string,
  groupBy: GroupBy,
  period?: string,
): Promise<Summary> {
  const totals = (await state.get<Totals>(totalsScope(realmId), period ?? ALL_TIME)) ?? {};
  const groups = totals[GROUP_FIELD[groupBy] as keyof Totals] as Record<string, number> | undefined;
  return {
    totalCents: fromMicros(totals.totalMicroCents ?? 0),
    totalInputTokens: totals.totalInputTokens ?? 0,
    totalOutputTokens: totals.totalOutputTokens ?? 0,
    eventCount: totals.eventCount ?? 0,
    breakdown: Object.fromEntries(
      Object.entries(groups ?? {}).map(([name, micros]) => [name, fromMicros(micros)]),
    ),
  };
}

/** What a budget's scope spent in these totals: the realm's whole, or one agent's share (cents). */
export function spentIn(totals: Totals | null | undefined, agentId?: string): number {
  const micros = agentId === undefined ? totals?.totalMicroCents : totals?.byAgent?.[agentId];
  return fromMicros(micros ?? 0);
}
