import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { AppError } from "../../shared/errors.ts";

const ALGORITHM = "aes-256-gcm";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** What is stored for a secret (all base64): never the plaintext. */
export interface SealedSecret {
  iv: string;
  tag: string;
  ciphertext: string;
}

/** The secret's name is the additional authenticated data: a ciphertext copied under another name fails. */
export function seal(key: Buffer, name: string, plaintext: string): SealedSecret {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(name, "utf8"));
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return {
    iv: iv.toString("base64"),
    tag: cipher.getAuthTag().toString("base64"),
    ciphertext: ciphertext.toString("base64"),
  };
}

export function open(key: Buffer, name: string, sealed: SealedSecret): string {
  const iv = Buffer.from(String(sealed.iv), "base64");
  const tag = Buffer.from(String(sealed.tag), "base64");
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
    throw new AppError("internal", `Vault secret "${name}" is stored in an unreadable form (bad iv or tag)`);
  }
  try {
    const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(name, "utf8"));
    decipher.setAuthTag(tag);
    const plaintext = Buffer.concat([
      decipher.update(Buffer.from(String(sealed.ciphertext), "base64")),
      decipher.final(),
    ]);
    return plaintext.toString("utf8");
  } catch (cause) {
    throw new AppError(
      "internal",
      `Cannot decrypt vault secret "${name}": the vault key (AGENTOS_VAULT_KEY or <data dir>/vault.key) is not ` +
        "the one it was stored with, or the stored record was altered",
      { cause },
    );
  }
}
