import type { StateClient } from "../../engine/state/client.ts";
import { oldestFirst } from "../../shared/pagination.ts";
import type { ListFilter, Mission, MissionComment } from "./schema.ts";

/** One scope per realm: a listing reads only its realm, a purge deletes only it. */
export const missionsScope = (realmId: string) => `missions:${realmId}`;
/** A mission's comments, keyed by time then id so a listing is in order. */
const commentsScope = (realmId: string, missionId: string) => `mission_comments:${realmId}:${missionId}`;

export function loadMission(state: StateClient, realmId: string, id: string): Promise<Mission | null> {
  return state.get<Mission>(missionsScope(realmId), id);
}

/** What a listing keeps of a mission: where it sorts, not its record (a realm may hold many). */
export type ListedMission = Pick<Mission, "id" | "priority" | "createdAt">;

/**
 * Missions passing every given filter, in no particular order (listings sort by listPosition, then read
 * the page's missions with missionsById).
 */
export async function listMissions(state: StateClient, filter: ListFilter): Promise<ListedMission[]> {
  const matches: ListedMission[] = [];
  for await (const { value } of state.scan<Mission>(missionsScope(filter.realmId))) {
    if (filter.status !== undefined && value.status !== filter.status) continue;
    if (filter.assigneeId !== undefined && value.assigneeId !== filter.assigneeId) continue;
    if (filter.directiveId !== undefined && value.directiveId !== filter.directiveId) continue;
    matches.push({ id: value.id, priority: value.priority, createdAt: value.createdAt });
  }
  return matches;
}

/** The missions of these ids, in their order (one deleted meanwhile is left out). */
export async function missionsById(state: StateClient, realmId: string, ids: string[]): Promise<Mission[]> {
  const found = await Promise.all(ids.map((id) => loadMission(state, realmId, id)));
  return found.filter((mission): mission is Mission => mission !== null);
}

const RANK: Record<Mission["priority"], number> = { critical: 0, high: 1, normal: 2, low: 3 };

/**
 * Where a mission sorts in a listing: by priority (critical first), then oldest first. A position of the
 * mission itself, so a mission added or changed between two pages does not shift the next page.
 */
export function listPosition(mission: Pick<Mission, "priority" | "createdAt" | "id">): string {
  return `${RANK[mission.priority]}:${oldestFirst(mission.createdAt, mission.id)}`;
}

export async function addComment(
  state: StateClient,
  realmId: string,
  comment: MissionComment,
): Promise<void> {
  await state.set(
    commentsScope(realmId, comment.missionId),
    `${comment.createdAt}:${comment.id}`,
    comment,
    0,
  );
}

/** The newest `limit` comments, oldest first. */
export async function recentComments(
  state: StateClient,
  realmId: string,
  missionId: string,
  limit: number,
): Promise<MissionComment[]> {
  // Only the last `limit` are held while the rest pass by: a mission may have MAX_COMMENTS.
  const recent: MissionComment[] = [];
  for await (const { value } of state.scan<MissionComment>(commentsScope(realmId, missionId))) {
    recent.push(value);
    if (recent.length > limit) recent.shift();
  }
  return recent;
}

/** Every mission of the realm with its comments; returns how many missions there were. */
export async function purgeMissions(state: StateClient, realmId: string): Promise<number> {
  const scope = missionsScope(realmId);
  // Keys first, deletes after: deleting while paging would move the cursor's ground under it.
  const ids: string[] = [];
  for await (const { key } of state.scan(scope)) ids.push(key);
  for (const id of ids) {
    await purgeComments(state, realmId, id);
    await state.delete(scope, id);
  }
  return ids.length;
}

/** Every comment of a mission (its mission deleted, or being deleted with its realm). */
export async function purgeComments(state: StateClient, realmId: string, missionId: string): Promise<void> {
  const scope = commentsScope(realmId, missionId);
  const keys: string[] = [];
  for await (const { key } of state.scan(scope)) keys.push(key);
  for (const key of keys) await state.delete(scope, key);
}
