import { createPublicKey, verify } from "node:crypto";
import { type Envelope, header } from "../envelope.ts";

/** The DER prefix of an Ed25519 SubjectPublicKeyInfo: Discord gives the 32-byte key alone, in hex. */
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

/** Discord interactions: Ed25519 signature (X-Signature-Ed25519) of timestamp + raw body under the app's public key. */
export function verifyDiscord(envelope: Envelope, publicKeyHex: string): string | null {
  const signature = header(envelope, "x-signature-ed25519");
  const timestamp = header(envelope, "x-signature-timestamp");
  if (!signature || !timestamp) return "Missing X-Signature-Ed25519 or X-Signature-Timestamp";
  if (!/^[0-9a-f]{64}$/i.test(publicKeyHex))
    return "channel:discord:public_key must be the application's 32-byte public key in hex";
  if (!/^[0-9a-f]{128}$/i.test(signature)) return "Invalid Discord signature";
  const key = createPublicKey({
    key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(publicKeyHex, "hex")]),
    format: "der",
    type: "spki",
  });
  const valid = verify(null, Buffer.from(timestamp + envelope.rawBody), key, Buffer.from(signature, "hex"));
  return valid ? null : "Invalid Discord signature";
}
