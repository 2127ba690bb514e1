import type { z } from "zod";
import type { StateClient } from "../../engine/state/client.ts";
import { nowIso } from "../../shared/clock.ts";
import { notFound } from "../../shared/errors.ts";
import { open, type SealedSecret, seal } from "./crypto.ts";
import type { secretInfo } from "./schema.ts";

/** Scope of the encrypted records, keyed by secret name. */
export const VAULT_SCOPE = "vault";

export interface StoredSecret extends SealedSecret {
  createdAt: string;
  updatedAt: string;
}

/** What may leave the vault about a secret: its name and timestamps, never its value. */
export type SecretInfo = z.infer<typeof secretInfo>;

export async function setSecret(
  state: StateClient,
  key: Buffer,
  name: string,
  value: string,
): Promise<SecretInfo> {
  const existing = await state.get<StoredSecret>(VAULT_SCOPE, name);
  const now = nowIso();
  const createdAt = existing?.createdAt ?? now;
  // Concurrent sets of one name: the last write wins, as with any overwrite.
  await state.set<StoredSecret>(VAULT_SCOPE, name, { ...seal(key, name, value), createdAt, updatedAt: now });
  return { key: name, createdAt, updatedAt: now };
}

export async function getSecret(
  state: StateClient,
  key: Buffer,
  name: string,
): Promise<{ key: string; value: string } | null> {
  const stored = await state.get<StoredSecret>(VAULT_SCOPE, name);
  return stored ? { key: name, value: open(key, name, stored) } : null;
}

export async function listSecrets(
  state: StateClient,
  prefix?: string,
): Promise<{ keys: SecretInfo[]; count: number }> {
  const keys: SecretInfo[] = [];
  for await (const record of state.scan<StoredSecret>(VAULT_SCOPE, prefix)) {
    keys.push({ key: record.key, createdAt: record.value.createdAt, updatedAt: record.value.updatedAt });
  }
  return { keys, count: keys.length };
}

export async function deleteSecret(state: StateClient, name: string): Promise<void> {
  const removed = await state.delete(VAULT_SCOPE, name);
  if (removed === null) throw notFound(`Vault secret ${name} not found`);
}
