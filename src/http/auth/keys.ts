import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import type { StateClient } from "../../engine/state/client.ts";
import type { Principal } from "../../engine/types.ts";
import { nowIso } from "../../shared/clock.ts";
import { notFound } from "../../shared/errors.ts";
import { nextCursor } from "../../shared/outputs.ts";

export const KEYS_SCOPE = "api_keys";
/** `{epoch}`: bumped by every revocation, so every process caching keys can tell it must forget them. */
const REVOCATIONS_SCOPE = "api_key_revocations";
const REVOCATIONS_KEY = "epoch";

export const apiKeyRecord = z.object({
  id: z.string(),
  hash: z.string(),
  name: z.string(),
  role: z.enum(["admin", "realm"]),
  realmId: z.string().optional(),
  /** The first characters of the key, so a user can tell keys apart without the secret. */
  hint: z.string(),
  createdAt: z.string(),
});
export type ApiKeyRecord = z.infer<typeof apiKeyRecord>;
/** A key as the routes show it: never its hash. */
export const publicKeyRecord = apiKeyRecord.omit({ hash: true });
export type PublicKeyRecord = z.infer<typeof publicKeyRecord>;
export const createdKey = publicKeyRecord.extend({
  key: z.string().describe("The key itself: shown this once, never again"),
});
export const keyPage = z.object({ keys: z.array(publicKeyRecord), nextCursor });

export function hashKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

/**
 * A key's id is random. It is shown wherever a key is named (a workflow's author, who decided an
 * approval, a realm key's own records): one derived from the key, as the hash's first 16 hex digits once
 * were, would let anyone who sees it test guesses at a key the operator chose (AGENTOS_API_KEY) offline.
 */
export function newKeyId(): string {
  return `key_${randomBytes(8).toString("hex")}`;
}

/** The id keys stored before ids were random have: the hash's first 16 hex digits. */
export function hashDerivedKeyId(hash: string): string {
  return `key_${hash.slice(0, 16)}`;
}

export function generateKey(): string {
  return `aos_${randomBytes(32).toString("base64url")}`;
}

function publicView({ hash: _hash, ...rest }: ApiKeyRecord): PublicKeyRecord {
  return rest;
}

/**
 * Enough of a generated key to tell it apart (4 of its 43 random characters); nothing of a key the
 * operator chose (AGENTOS_API_KEY), which may be short enough for a few characters to matter.
 */
function hintOf(key: string): string {
  return key.startsWith("aos_") ? `${key.slice(0, 8)}…` : "(set by the operator)";
}

export async function storeKey(
  state: StateClient,
  key: string,
  options: { name: string; role: "admin" | "realm"; realmId?: string },
): Promise<PublicKeyRecord> {
  const hash = hashKey(key);
  const record: ApiKeyRecord = {
    id: newKeyId(),
    hash,
    name: options.name,
    role: options.role,
    ...(options.role === "realm" ? { realmId: options.realmId } : {}),
    hint: hintOf(key),
    createdAt: nowIso(),
  };
  await state.set(KEYS_SCOPE, hash, record);
  return publicView(record);
}

export async function createKey(
  state: StateClient,
  options: { name?: string; realmId?: string },
): Promise<PublicKeyRecord & { key: string }> {
  const key = generateKey();
  const record = await storeKey(state, key, {
    name: options.name ?? (options.realmId ? `realm ${options.realmId}` : "admin"),
    role: options.realmId ? "realm" : "admin",
    realmId: options.realmId,
  });
  return { ...record, key };
}

export async function listKeys(state: StateClient): Promise<PublicKeyRecord[]> {
  const keys: PublicKeyRecord[] = [];
  for await (const item of state.scan<ApiKeyRecord>(KEYS_SCOPE)) keys.push(publicView(item.value));
  return keys.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/**
 * Deletes the key; returns the full record so callers can evict its hash from caches. Ids say nothing
 * of the key, so it is found by a scan: keys are few and revocations rare.
 */
export async function revokeKey(state: StateClient, id: string): Promise<ApiKeyRecord> {
  let record: { key: string; value: ApiKeyRecord } | undefined;
  for await (const item of state.scan<ApiKeyRecord>(KEYS_SCOPE)) {
    if (item.value.id === id) {
      record = item;
      break;
    }
  }
  if (!record) throw notFound(`API key ${id} not found`);
  await state.delete(KEYS_SCOPE, record.key);
  await bumpRevocationEpoch(state);
  return record.value;
}

/**
 * Deletes every key bound to the realm (the realm is being deleted); returns their records so callers
 * can evict them from caches. The epoch moves even when no key was found: a run that deleted keys and
 * then failed before moving it is finished by the retry, and other processes still forget the keys.
 * Keys are few and realm deletes rare, so a scan of the keys is fine here.
 */
export async function revokeRealmKeys(state: StateClient, realmId: string): Promise<ApiKeyRecord[]> {
  const bound: Array<{ key: string; value: ApiKeyRecord }> = [];
  for await (const item of state.scan<ApiKeyRecord>(KEYS_SCOPE)) {
    if (item.value.role === "realm" && item.value.realmId === realmId) bound.push(item);
  }
  for (const item of bound) await state.delete(KEYS_SCOPE, item.key);
  await bumpRevocationEpoch(state);
  return bound.map((item) => item.value);
}

function bumpRevocationEpoch(state: StateClient): Promise<unknown> {
  return state.update(REVOCATIONS_SCOPE, REVOCATIONS_KEY, [{ type: "increment", path: "epoch", by: 1 }]);
}

export async function revocationEpoch(state: StateClient): Promise<number> {
  return (await state.get<{ epoch: number }>(REVOCATIONS_SCOPE, REVOCATIONS_KEY))?.epoch ?? 0;
}

export async function hasAdminKey(state: StateClient): Promise<boolean> {
  for await (const item of state.scan<ApiKeyRecord>(KEYS_SCOPE)) if (item.value.role === "admin") return true;
  return false;
}

/** The principal for a presented key, or null. The stored hash is compared in constant time. */
export function verifyKey(state: StateClient, presented: string): Promise<Principal | null> {
  return principalForHash(state, hashKey(presented));
}

/** As verifyKey, for a caller that has hashed the key already. */
export async function principalForHash(state: StateClient, hash: string): Promise<Principal | null> {
  const record = await state.get<ApiKeyRecord>(KEYS_SCOPE, hash);
  if (!record) return null;
  if (!timingSafeEqual(Buffer.from(record.hash, "hex"), Buffer.from(hash, "hex"))) return null;
  // Fails closed: only a record that says admin is one (a realm key missing its realm is no key).
  if (record.role === "admin") return { kind: "admin", keyId: record.id };
  return record.role === "realm" && record.realmId
    ? { kind: "realm", keyId: record.id, realmId: record.realmId }
    : null;
}

/** `Authorization: Bearer <key>` → the key, or null when the header is absent or malformed. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match && match[1].length <= 512 ? match[1] : null;
}
