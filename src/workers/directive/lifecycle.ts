import { badRequest, conflict } from "../../shared/errors.ts";
import type { Directive, DirectiveChanges, DirectiveStatus } from "./schema.ts";

/**
 * The status machine (DESIGN §5): Active⇄Paused, Active|Paused → Complete|Cancelled. Complete and
 * Cancelled have no way out, which is what makes them terminal.
 */
const NEXT: Record<DirectiveStatus, readonly DirectiveStatus[]> = {
  Active: ["Paused", "Complete", "Cancelled"],
  Paused: ["Active", "Complete", "Cancelled"],
  Complete: [],
  Cancelled: [],
};

const CHANGEABLE = ["title", "description", "status", "priority", "ownerAgentId"] as const;

export const isTerminal = (status: DirectiveStatus): boolean => NEXT[status].length === 0;

export function canMove(from: DirectiveStatus, to: DirectiveStatus): boolean {
  return from === to || NEXT[from].includes(to);
}

/** An update must change something: an empty PATCH is a client mistake, not a version bump. */
export function assertNotEmpty(changes: DirectiveChanges): void {
  if (CHANGEABLE.every((field) => changes[field] === undefined)) {
    throw badRequest(`an update needs at least one of ${CHANGEABLE.join(", ")}`);
  }
}

/**
 * The caller's expectedVersion, when given, must be the directive's version. The record's own version
 * is the wire contract (the store's counter is an implementation detail a direct state write moves).
 */
export function assertVersion(current: Directive, expectedVersion: number | undefined): void {
  if (expectedVersion !== undefined && current.version !== expectedVersion) {
    throw conflict(
      `directive ${current.id} version conflict: expected version ${expectedVersion}, current version ${current.version}`,
    );
  }
}

/**
 * The directive after `changes`, one version later. A move the machine does not allow is refused, and
 * a terminal directive is read-only (the record of a finished goal should not drift), so any other
 * change to one is refused too; both are 409: the request is valid, the directive's state forbids it.
 */
export function applyChanges(current: Directive, changes: DirectiveChanges, now: string): Directive {
  if (changes.status !== undefined && !canMove(current.status, changes.status)) {
    throw conflict(`directive ${current.id} cannot move from ${current.status} to ${changes.status}`);
  }
  if (isTerminal(current.status)) {
    throw conflict(`directive ${current.id} is ${current.status} and read-only`);
  }
  const next: Directive = { ...current, version: current.version + 1, updatedAt: now };
  if (changes.title !== undefined) next.title = changes.title;
  if (changes.status !== undefined) next.status = changes.status;
  setOrClear(next, "description", changes.description);
  setOrClear(next, "priority", changes.priority);
  setOrClear(next, "ownerAgentId", changes.ownerAgentId);
  return next;
}

/** undefined leaves the field as it is, null removes it, anything else replaces it. */
function setOrClear<K extends "description" | "priority" | "ownerAgentId">(
  directive: Directive,
  field: K,
  value: Directive[K] | null | undefined,
): void {
  if (value === null) delete directive[field];
  else if (value !== undefined) directive[field] = value;
}
