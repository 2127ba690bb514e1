import type { BatchOp } from "../../engine/state/types.ts";
import { newId } from "../../shared/ids.ts";
import { budgetKey } from "./budget.ts";
import type { SpendEvent, SpendInput } from "./schema.ts";
import { claimsScope, spendScope } from "./store.ts";

/** What a group's transaction writes besides budgets and totals (spend.ts): events, claims, absence guards. */

/**
 * Every spend gets a fresh id: an id made from the caller's eventId could equal another spend's (one
 * without an eventId is `spn-<random uuid>`, and a later eventId may be that uuid) and overwrite it.
 * The eventId stays on the event for tracing; a replay finds the outcome through the claim.
 */
export function draftEvent(input: SpendInput, now: number): SpendEvent {
  const { eventId, ...fields } = input;
  return {
    id: newId("spn"),
    ...fields,
    ...(eventId === undefined ? {} : { eventId }),
    timestamp: new Date(now).toISOString(),
    status: "pending",
  };
}

/** The eventId's claim holds the outcome; create-only, or replacing a claim left pending by an older version. */
export function claimOp(event: SpendEvent, pendingVersion: number | undefined): BatchOp[] {
  if (event.eventId === undefined) return [];
  return [
    {
      type: "set",
      scope: claimsScope(event.realmId),
      key: event.eventId,
      value: event,
      expectedVersion: pendingVersion ?? 0,
    },
  ];
}

/** Create-only: a spend's id is fresh (see draftEvent), so nothing is read before it is written. */
export function eventOp(event: SpendEvent): BatchOp {
  return { type: "set", scope: spendScope(event.realmId), key: event.id, value: event, expectedVersion: 0 };
}

/**
 * For each budget an accepted spend would have been charged to had it existed: a check, after the
 * totals' increments, that it still does not (a delete of nothing, conditional on version 0). A budget
 * created meanwhile starts from the month's totals as it read them (opening.ts); without this check a
 * spend counted in between would be in neither. Coming after the totals, the check also holds on
 * Postgres: the budget's write locks the same totals record first.
 */
export function absenceGuards(scope: string, read: Map<string, unknown>, accepted: SpendEvent[]): BatchOp[] {
  if (accepted.length === 0) return [];
  const keys = new Set([...accepted.map((event) => budgetKey(event.agentId)), budgetKey()]);
  return [...keys]
    .filter((key) => !read.has(key))
    .map((key): BatchOp => ({ type: "delete", scope, key, expectedVersion: 0 }));
}
