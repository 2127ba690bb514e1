import { createPublicKey, verify } from "node:crypto";
import { type Envelope, header } from "../envelope.ts";
import { SIGNATURE_TOLERANCE_S } from "../generic.ts";

/** The DER prefix of an Ed25519 SubjectPublicKeyInfo: Discord gives the 32-byte key alone, in hex. */
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

/**
 * Discord interactions: Ed25519 signature (X-Signature-Ed25519) of timestamp + raw body under the app's
 * public key, the timestamp within SIGNATURE_TOLERANCE_S of now: interaction ids are remembered for a
 * week only, and a captured interaction must not run a turn again after that.
 */
export function verifyDiscord(envelope: Envelope, publicKeyHex: string, nowMs: number): string | null {
  const signature = header(envelope, "x-signature-ed25519");
  const timestamp = header(envelope, "x-signature-timestamp");
  if (!signature || !timestamp) return "Missing X-Signature-Ed25519 or X-Signature-Timestamp";
  if (!/^[0-9a-f]{64}$/i.test(publicKeyHex))
    return "channel:discord:public_key must be the application's 32-byte public key in hex";
  if (!/^[0-9a-f]{128}$/i.test(signature)) return "Invalid Discord signature";
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(nowMs / 1000 - Number(timestamp)) > SIGNATURE_TOLERANCE_S)
    return `Stale request: X-Signature-Timestamp is more than ${SIGNATURE_TOLERANCE_S} s from now`;
  const key = createPublicKey({
    key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(publicKeyHex, "hex")]),
    format: "der",
    type: "spki",
  });
  const valid = verify(null, Buffer.from(timestamp + envelope.rawBody), key, Buffer.from(signature, "hex"));
  return valid ? null : "Invalid Discord signature";
}
