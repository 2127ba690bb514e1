import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { derivePassphraseKey, loadVaultKey, VAULT_KEY_FILE } from "../../../src/workers/vault/key.ts";

let dataDir: string;
let warnings: string[];
const warn = (message: string) => warnings.push(message);

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "agentos-vault-"));
  warnings = [];
});

afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe("vault key from AGENTOS_VAULT_KEY", () => {
  const raw = randomBytes(32);

  it("accepts 64 hex characters", () => {
    expect(loadVaultKey({ env: raw.toString("hex"), dataDir })).toEqual(raw);
    expect(loadVaultKey({ env: raw.toString("hex").toUpperCase(), dataDir })).toEqual(raw);
  });

  it("accepts base64 and base64url of 32 bytes, with or without padding", () => {
    expect(loadVaultKey({ env: raw.toString("base64"), dataDir })).toEqual(raw);
    expect(loadVaultKey({ env: raw.toString("base64url"), dataDir })).toEqual(raw);
  });

  it("derives a 32-byte key from anything else as a passphrase, the same on every call", () => {
    const key = loadVaultKey({ env: "correct horse battery staple", dataDir });
    expect(key).toHaveLength(32);
    expect(loadVaultKey({ env: "correct horse battery staple", dataDir })).toEqual(key);
    expect(derivePassphraseKey("another passphrase")).not.toEqual(key);
    // Hex of the wrong length is a passphrase too, not a truncated key.
    expect(loadVaultKey({ env: "ab".repeat(16), dataDir })).toHaveLength(32);
  });

  it("does not create a key file when the environment supplies the key", () => {
    loadVaultKey({ env: raw.toString("hex"), dataDir });
    expect(() => statSync(join(dataDir, VAULT_KEY_FILE))).toThrow();
  });
});

describe("vault key file", () => {
  it("is generated with mode 0600 when no key is configured, and reused afterwards", () => {
    const key = loadVaultKey({ env: undefined, dataDir, warn });
    const path = join(dataDir, VAULT_KEY_FILE);
    expect(key).toHaveLength(32);
    expect(modeOf(path)).toBe(0o600);
    expect(readFileSync(path, "utf8").trim()).toBe(key.toString("hex"));
    expect(loadVaultKey({ env: undefined, dataDir, warn })).toEqual(key);
    expect(warnings).toEqual([]);
  });

  it("treats a blank AGENTOS_VAULT_KEY as unset", () => {
    const key = loadVaultKey({ env: "  ", dataDir, warn });
    expect(loadVaultKey({ env: undefined, dataDir, warn })).toEqual(key);
  });

  it("creates the data directory when it does not exist yet", () => {
    const nested = join(dataDir, "deeper", "data");
    expect(loadVaultKey({ env: undefined, dataDir: nested, warn })).toHaveLength(32);
    expect(modeOf(join(nested, VAULT_KEY_FILE))).toBe(0o600);
  });

  it.skipIf(process.platform === "win32")("tightens a key file readable by others to 0600 and warns", () => {
    const key = loadVaultKey({ env: undefined, dataDir, warn });
    const path = join(dataDir, VAULT_KEY_FILE);
    chmodSync(path, 0o644);
    expect(loadVaultKey({ env: undefined, dataDir, warn })).toEqual(key);
    expect(modeOf(path)).toBe(0o600);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/0644.*tightened to 0600/);
  });

  it("refuses a key file that does not hold a key, naming the file", () => {
    writeFileSync(join(dataDir, VAULT_KEY_FILE), "not a key\n", { mode: 0o600 });
    expect(() => loadVaultKey({ env: undefined, dataDir, warn })).toThrow(
      /vault\.key does not hold a 32-byte key/,
    );
  });
});
