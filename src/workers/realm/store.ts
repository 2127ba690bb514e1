import { casUpdate, isConflict } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import { nowIso } from "../../shared/clock.ts";
import { conflict, notFound } from "../../shared/errors.ts";
import {
  DEFAULT_REALM_ID,
  REALMS_SCOPE,
  type Realm,
  type RealmStatus,
  transitions,
  type UpdateRealmInput,
} from "./schema.ts";

export const realmNotFound = (id: string) => notFound(`Realm ${id} not found`);

export async function readRealm(state: StateClient, id: string): Promise<Realm> {
  const realm = await state.get<Realm>(REALMS_SCOPE, id);
  if (!realm) throw realmNotFound(id);
  return realm;
}

/** Every realm, oldest first (the id breaks ties so the order is stable). */
export async function listRealms(state: StateClient): Promise<Realm[]> {
  const realms: Realm[] = [];
  for await (const record of state.scan<Realm>(REALMS_SCOPE)) realms.push(record.value);
  return realms.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
}

/** A create-only write: the version must be 0, so an existing record is never overwritten. */
export async function insertRealm(state: StateClient, realm: Realm): Promise<void> {
  await state.set(REALMS_SCOPE, realm.id, realm, 0);
}

/**
 * realm-default, created once. Several cluster nodes may start together: the create-only write lets
 * exactly one of them create it, and the others find it there.
 */
export async function ensureDefaultRealm(state: StateClient): Promise<void> {
  if (await state.get<Realm>(REALMS_SCOPE, DEFAULT_REALM_ID)) return;
  const now = nowIso();
  try {
    await insertRealm(state, {
      id: DEFAULT_REALM_ID,
      name: "Default",
      owner: "system",
      status: "Active",
      createdAt: now,
      updatedAt: now,
    });
  } catch (error) {
    if (!isConflict(error)) throw error;
  }
}

/** 409 unless `to` may follow `from`; staying in the same status is no move and always allowed. */
export function checkTransition(realm: Realm, to: RealmStatus): void {
  if (to === realm.status) return;
  if (!transitions[realm.status].includes(to)) {
    throw conflict(`Realm ${realm.id} cannot move from ${realm.status} to ${to}`);
  }
  if (to === "Archived" && realm.id === DEFAULT_REALM_ID) {
    throw conflict(`Realm ${DEFAULT_REALM_ID} cannot be archived: agents created without a realm land there`);
  }
}

/** The realm as it is after `patch`: present fields overwrite, null removes an optional field. */
export function patched(realm: Realm, patch: Omit<UpdateRealmInput, "id">): Realm {
  const next: Record<string, unknown> = { ...realm };
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) delete next[field];
    else next[field] = value;
  }
  return { ...(next as unknown as Realm), updatedAt: nowIso() };
}

/** Refuses any change to a realm that is archived (read-only) or being deleted. */
export function assertWritable(realm: Realm): void {
  if (realm.status === "Archived") throw conflict(`Realm ${realm.id} is archived and read-only`);
  assertNotDeleting(realm);
}

/** 409 for a realm being deleted: its data may be purged in part, so nothing read of it is whole. */
export function assertNotDeleting(realm: Realm): void {
  if (realm.deleting) throw conflict(`Realm ${realm.id} is being deleted`);
}

/** The one read-modify-write of a realm record (compare-and-swap, retried on conflict). */
export async function updateRealm(
  state: StateClient,
  id: string,
  change: (realm: Realm) => Realm | undefined,
): Promise<{ before: Realm; after: Realm }> {
  let before: Realm | undefined;
  const result = await casUpdate<Realm>(state, REALMS_SCOPE, id, ({ value }) => {
    if (!value) throw realmNotFound(id);
    before = value;
    return change(value);
  });
  return { before: before as Realm, after: result.value as Realm };
}

/** The realm as the outside world sees it: without the internal delete marker. */
export function publicRealm(realm: Realm): Realm {
  const { deleting: _marker, ...rest } = realm;
  return rest;
}
