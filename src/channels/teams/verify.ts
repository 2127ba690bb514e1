import { type Envelope, header, hmac, sameSecret } from "../envelope.ts";

/** Teams outgoing webhooks: `Authorization: HMAC <base64 HMAC-SHA256 of the raw body>`, keyed by the base64-decoded secret. */
export function verifyTeams(envelope: Envelope, secret: string): string | null {
  const authorization = header(envelope, "authorization");
  if (!authorization?.startsWith("HMAC ")) return "Missing Authorization: HMAC <signature>";
  // Decoding skips what is not base64: a secret of none would be an empty key, with which anyone signs.
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(secret))
    return "channel:teams:hmac_secret must be the base64 security token Teams gave for the webhook";
  const expected = hmac("sha256", Buffer.from(secret, "base64"), envelope.rawBody, "base64");
  return sameSecret(expected, authorization.slice(5).trim()) ? null : "Invalid Teams HMAC signature";
}
