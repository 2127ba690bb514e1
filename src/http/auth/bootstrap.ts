import { rmSync, writeFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { StateClient } from "../../engine/state/client.ts";
import {
  type ApiKeyRecord,
  createKey,
  hasAdminKey,
  hashDerivedKeyId,
  hashKey,
  KEYS_SCOPE,
  newKeyId,
  revokeKey,
  storeKey,
} from "./keys.ts";

/** The name the key of AGENTOS_API_KEY is stored under. */
const OPERATOR_KEY_NAME = "AGENTOS_API_KEY";

/**
 * Makes sure an admin key exists: AGENTOS_API_KEY when set, else a key generated at first start and
 * written to <dataDir>/admin.key (0600). Returns the generated key so the caller can print it once.
 */
export async function bootstrapAdminKey(
  state: StateClient,
  options: { apiKey?: string; dataDir: string },
): Promise<{ generatedKey?: string; keyFile?: string }> {
  if (options.apiKey) {
    const hash = hashKey(options.apiKey);
    const stored = await state.get<ApiKeyRecord>(KEYS_SCOPE, hash);
    if (!stored) {
      await storeKey(state, options.apiKey, { name: OPERATOR_KEY_NAME, role: "admin" });
    } else if (stored.id === hashDerivedKeyId(hash)) {
      // Stored before ids were random: its id would let whoever sees it test guesses at the key.
      await state.set(KEYS_SCOPE, hash, { ...stored, id: newKeyId() });
    }
    await revokeEarlierValues(state, hash);
    return {};
  }
  if (await hasAdminKey(state)) return {};
  const created = await createKey(state, { name: "bootstrap admin" });
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const keyFile = join(options.dataDir, "admin.key");
  // Always a new file: an older admin.key (or a link planted in its place, which "wx" never follows)
  // is removed, so the key is written nowhere else and is 0600 from its first byte.
  rmSync(keyFile, { force: true });
  writeFileSync(keyFile, `${created.key}\n`, { mode: 0o600, flag: "wx" });
  return { generatedKey: created.key, keyFile };
}

/**
 * A changed AGENTOS_API_KEY replaces the value it had: the key stored for an earlier value (same name,
 * admin) is revoked at start, so rotating the variable ends the old key instead of leaving it an admin.
 */
async function revokeEarlierValues(state: StateClient, current: string): Promise<void> {
  const earlier: string[] = [];
  for await (const { value } of state.scan<ApiKeyRecord>(KEYS_SCOPE)) {
    if (value.name === OPERATOR_KEY_NAME && value.role === "admin" && value.hash !== current)
      earlier.push(value.id);
  }
  for (const id of earlier) await revokeKey(state, id);
}
