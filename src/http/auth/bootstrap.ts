import { chmodSync, writeFileSync } from "node:fs";
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
  storeKey,
} from "./keys.ts";

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
      await storeKey(state, options.apiKey, { name: "AGENTOS_API_KEY", role: "admin" });
    } else if (stored.id === hashDerivedKeyId(hash)) {
      // Stored before ids were random: its id would let whoever sees it test guesses at the key.
      await state.set(KEYS_SCOPE, hash, { ...stored, id: newKeyId() });
    }
    return {};
  }
  if (await hasAdminKey(state)) return {};
  const created = await createKey(state, { name: "bootstrap admin" });
  await mkdir(options.dataDir, { recursive: true });
  const keyFile = join(options.dataDir, "admin.key");
  writeFileSync(keyFile, `${created.key}\n`, { mode: 0o600 });
  // The mode above applies only to a new file: an older admin.key keeps its own, so set it again.
  chmodSync(keyFile, 0o600);
  return { generatedKey: created.key, keyFile };
}
