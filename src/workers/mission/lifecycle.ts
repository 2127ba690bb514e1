import { actingAgentOf } from "../../engine/acting-agent.ts";
import type { Principal } from "../../engine/types.ts";
import { conflict, forbidden } from "../../shared/errors.ts";
import type { Mission, MissionStatus } from "./schema.ts";

/**
 * The moves `transition` makes (DESIGN §5). Entering `active` from backlog, queued or blocked is a
 * checkout (it needs an assignee); leaving an active mission for `queued` is a release (the assignee
 * gives it up). complete and cancelled are terminal.
 */
const MOVES: Record<MissionStatus, readonly MissionStatus[]> = {
  backlog: ["queued", "blocked", "cancelled"],
  queued: ["backlog", "blocked", "cancelled"],
  active: ["review", "blocked", "cancelled"],
  review: ["active", "complete", "cancelled"],
  blocked: ["queued", "cancelled"],
  complete: [],
  cancelled: [],
};

/** Statuses a mission can be checked out from (it then becomes active, with its assignee). */
export const CHECKOUT_FROM: readonly MissionStatus[] = ["backlog", "queued", "blocked"];

/**
 * Moving from `active` (and from `review`, which is the assignee's work awaiting approval, and `blocked`,
 * which is still the assignee's work when it has one) is theirs.
 */
const ASSIGNEES_MOVE: readonly MissionStatus[] = ["active", "review", "blocked"];

export function assertMove(mission: Mission, to: MissionStatus): void {
  if (MOVES[mission.status].includes(to)) return;
  const hint =
    to === "active" && CHECKOUT_FROM.includes(mission.status)
      ? ` (an agent takes it with POST /api/missions/${mission.realmId}/${mission.id}/checkout)`
      : to === "queued" && mission.status === "active"
        ? " (the assignee gives it back with .../release)"
        : "";
  throw conflict(`Mission ${mission.id} cannot move from ${mission.status} to ${to}${hint}`);
}

/** Only the assignee (or an admin key) moves a mission that is being worked on. */
export function assertMayMove(mission: Mission, agentId: string | undefined, privileged: boolean): void {
  if (privileged || !ASSIGNEES_MOVE.includes(mission.status) || mission.assigneeId === null) return;
  if (agentId === mission.assigneeId) return;
  throw forbidden(
    `Mission ${mission.id} is ${mission.status} with ${mission.assigneeId}: only its assignee (agentId) or an admin key may move it`,
  );
}

/**
 * A key names any of its realm's agents as author or creator; an agent's own call (a tool a model chose)
 * writes as that agent only, so a model cannot put words or work in another agent's name.
 */
export function assertWritesAsItself(auth: Principal, field: string, agentId: string): void {
  const acting = actingAgentOf(auth);
  if (acting !== undefined && acting !== agentId) {
    throw forbidden(`${field} ${agentId}: agent ${acting} writes as itself only`);
  }
}

/** Comments a mission keeps: each read of a mission passes over all of them. */
export const MAX_COMMENTS = 10_000;

/** The mission's comment count with one more, or a 409 once it has MAX_COMMENTS. */
export function nextCommentCount(mission: Pick<Mission, "id" | "commentCount">): number {
  const count = mission.commentCount ?? 0;
  if (count >= MAX_COMMENTS)
    throw conflict(
      `Mission ${mission.id} has ${MAX_COMMENTS} comments, the most it keeps: start a new mission`,
    );
  return count + 1;
}

export function assertVersion(mission: Mission, expectedVersion: number | undefined): void {
  if (expectedVersion !== undefined && expectedVersion !== mission.version) {
    throw conflict(`Mission ${mission.id} is at version ${mission.version}, not ${expectedVersion}`);
  }
}

/**
 * The mission after a move: version + 1, and the times that mark its start and end. A queued mission
 * waits for anyone to take it, so it has no assignee (one kept would refuse every other checkout).
 */
export function moved(mission: Mission, to: MissionStatus, now: string): Mission {
  return {
    ...mission,
    status: to,
    version: mission.version + 1,
    updatedAt: now,
    ...(to === "complete" || to === "cancelled" ? { completedAt: now } : {}),
    ...(to === "queued" ? { assigneeId: null } : {}),
  };
}

/** Checked out: the agent's, active, started now. Another agent's mission, or a wrong status, is a 409. */
export function checkedOut(mission: Mission, agentId: string, now: string): Mission {
  if (mission.assigneeId !== null && (mission.status === "active" || mission.assigneeId !== agentId)) {
    throw conflict(`Mission ${mission.id} is already checked out by ${mission.assigneeId}`);
  }
  if (!CHECKOUT_FROM.includes(mission.status)) {
    throw conflict(
      `Mission ${mission.id} cannot be checked out from ${mission.status} (only from ${CHECKOUT_FROM.join(", ")})`,
    );
  }
  return { ...moved(mission, "active", now), assigneeId: agentId, startedAt: now };
}

/** Released by its assignee: back to queued, unassigned. */
export function released(mission: Mission, agentId: string, now: string): Mission {
  if (mission.assigneeId !== agentId) {
    throw forbidden(
      `Mission ${mission.id} is ${mission.assigneeId ? `assigned to ${mission.assigneeId}` : "not assigned"}: only its assignee may release it`,
    );
  }
  if (!["active", "review", "blocked"].includes(mission.status)) {
    throw conflict(`Mission ${mission.id} cannot be released from ${mission.status}`);
  }
  return moved(mission, "queued", now);
}
