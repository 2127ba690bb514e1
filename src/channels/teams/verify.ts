import { type Envelope, header, hmac, sameSecret } from "../envelope.ts";

/** Teams outgoing webhooks: `Authorization: HMAC <base64 HMAC-SHA256 of the raw body>`, keyed by the base64-decoded secret. */
export function verifyTeams(envelope: Envelope, secret: string): string | null {
  const authorization = header(envelope, "authorization");
  if (!authorization?.startsWith("HMAC ")) return "Missing Authorization: HMAC <signature>";
  const expected = hmac("sha256", Buffer.from(secret, "base64"), envelope.rawBody, "base64");
  return sameSecret(expected, authorization.slice(5).trim()) ? null : "Invalid Teams HMAC signature";
}
