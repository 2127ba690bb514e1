import { type Envelope, header, hmac, sameSecret } from "../envelope.ts";

/** LINE: X-Line-Signature is the base64 HMAC-SHA256 of the raw body under the channel secret. */
export function verifyLine(envelope: Envelope, channelSecret: string): string | null {
  const signature = header(envelope, "x-line-signature");
  if (!signature) return "Missing X-Line-Signature";
  return sameSecret(hmac("sha256", channelSecret, envelope.rawBody, "base64"), signature)
    ? null
    : "Invalid X-Line-Signature";
}
