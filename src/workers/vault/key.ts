import { randomBytes, scryptSync } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export const VAULT_KEY_BYTES = 32;
export const VAULT_KEY_FILE = "vault.key";

/**
 * Passphrases are stretched with scrypt and this fixed salt. A fixed salt is deliberate: every node
 * of a cluster (and a restored backup) must derive the same key from the same AGENTOS_VAULT_KEY with
 * nothing else to share. The cost is that precomputation against AgentOS as a whole is possible, so
 * a passphrase should be long; a random 64-hex-character key avoids the question.
 */
export const PASSPHRASE_SALT = "agentos-vault-key-v1";
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

export interface LoadVaultKeyOptions {
  /** AGENTOS_VAULT_KEY; empty or blank counts as unset. */
  env: string | undefined;
  dataDir: string;
  /** Where a warning about the key file goes (default: process.emitWarning). */
  warn?: (message: string) => void;
}

/**
 * The 32-byte AES key: from AGENTOS_VAULT_KEY (64 hex characters, base64 of 32 bytes, or else a
 * passphrase), otherwise from `<dataDir>/vault.key`, generated (mode 0600) on first use.
 */
export function loadVaultKey(options: LoadVaultKeyOptions): Buffer {
  const env = options.env?.trim();
  if (env) return parseRawKey(env) ?? derivePassphraseKey(env);
  const warn =
    options.warn ?? ((message: string) => process.emitWarning(message, { code: "AGENTOS_VAULT_KEY" }));
  return readOrCreateKeyFile(join(options.dataDir, VAULT_KEY_FILE), warn);
}

/** 64 hex characters, or standard/URL-safe base64 (padding optional) of exactly 32 bytes; else null. */
export function parseRawKey(text: string): Buffer | null {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, "hex");
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(text)) {
    const key = Buffer.from(text, "base64");
    if (key.length === VAULT_KEY_BYTES) return key;
  }
  return null;
}

export function derivePassphraseKey(passphrase: string): Buffer {
  return scryptSync(passphrase.normalize("NFC"), PASSPHRASE_SALT, VAULT_KEY_BYTES, SCRYPT);
}

function readOrCreateKeyFile(path: string, warn: (message: string) => void): Buffer {
  const created = createKeyFile(path);
  if (created) return created;
  checkPermissions(path, warn);
  const key = parseRawKey(readFileSync(path, "utf8").trim());
  if (!key) {
    throw new Error(
      `Vault key file ${path} does not hold a 32-byte key (64 hex characters). Restore the original file ` +
        "or set AGENTOS_VAULT_KEY; secrets stored with another key cannot be decrypted.",
    );
  }
  return key;
}

/** Creates the key file unless it exists; "wx" makes two processes starting at once agree on one key. */
function createKeyFile(path: string): Buffer | null {
  const key = randomBytes(VAULT_KEY_BYTES);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    writeFileSync(path, `${key.toString("hex")}\n`, { mode: 0o600, flag: "wx" });
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return null;
    throw error;
  }
}

/** Anyone who can read the key file can read every secret, so it must be private to its owner. */
function checkPermissions(path: string, warn: (message: string) => void): void {
  if (process.platform === "win32") return;
  const mode = statSync(path).mode & 0o777;
  if ((mode & 0o077) === 0) return;
  const shown = mode.toString(8).padStart(4, "0");
  try {
    chmodSync(path, 0o600);
    warn(
      `Vault key file ${path} was accessible to other users (mode ${shown}); permissions tightened to 0600`,
    );
  } catch {
    warn(
      `Vault key file ${path} is accessible to other users (mode ${shown}) and could not be changed: chmod 600 it`,
    );
  }
}
