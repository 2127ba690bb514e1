import { type Envelope, header, hmac, sameSecret } from "../envelope.ts";

/** Slack's v0 scheme: `v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<raw body>`, timestamp within 5 minutes. */
export function verifySlack(envelope: Envelope, signingSecret: string, nowMs: number): string | null {
  const timestamp = header(envelope, "x-slack-request-timestamp");
  const signature = header(envelope, "x-slack-signature");
  if (!timestamp || !signature) return "Missing X-Slack-Request-Timestamp or X-Slack-Signature";
  if (!/^\d+$/.test(timestamp) || Math.abs(nowMs / 1000 - Number(timestamp)) > 300) {
    return "Stale request: X-Slack-Request-Timestamp is more than 5 minutes from now";
  }
  const expected = `v0=${hmac("sha256", signingSecret, `v0:${timestamp}:${envelope.rawBody}`, "hex")}`;
  return sameSecret(expected, signature) ? null : "Invalid Slack signature";
}
