import { type Envelope, header, hmac, sameSecret } from "./envelope.ts";

/**
 * The generic webhook (`POST /webhook/:channelId`): any system that can sign a JSON or form body. Its
 * one vault entry is per channel, not per platform.
 */
export const genericVaultName = (channelId: string) => `channel:${channelId}:secret`;

/** How far a signed request's timestamp may be from the service's clock, in seconds (as Slack allows). */
export const SIGNATURE_TOLERANCE_S = 300;

/** A verified signature: `once` names a timestamped one, which must not be taken a second time. */
export type GenericProof = { problem: string } | { problem: null; once?: string };

/**
 * `X-Signature-256: sha256=<hex HMAC-SHA256>` under the channel's secret, of the raw body; or, with
 * `X-Signature-Timestamp: <unix seconds>`, of `<timestamp>.<raw body>`, within SIGNATURE_TOLERANCE_S of
 * now. Only the timestamped form can be refused when replayed (the caller remembers `once`).
 */
export function verifyGenericSignature(envelope: Envelope, secret: string, nowMs: number): GenericProof {
  const signature = header(envelope, "x-signature-256");
  if (!signature)
    return { problem: "Send an API key, or X-Signature-256 when the channel has a secret in the vault" };
  const stamp = header(envelope, "x-signature-timestamp");
  if (stamp === undefined) {
    return sameSecret(`sha256=${hmac("sha256", secret, envelope.rawBody, "hex")}`, signature)
      ? { problem: null }
      : { problem: "Invalid X-Signature-256" };
  }
  if (!/^\d{1,12}$/.test(stamp)) return { problem: "X-Signature-Timestamp is not a time in unix seconds" };
  if (Math.abs(nowMs / 1000 - Number(stamp)) > SIGNATURE_TOLERANCE_S) {
    return { problem: `X-Signature-Timestamp is more than ${SIGNATURE_TOLERANCE_S} s from now` };
  }
  const expected = `sha256=${hmac("sha256", secret, `${stamp}.${envelope.rawBody}`, "hex")}`;
  return sameSecret(expected, signature)
    ? { problem: null, once: expected }
    : { problem: "Invalid X-Signature-256 (of <timestamp>.<body>)" };
}

/** The message of a generic body: its first non-empty `message`, `text` or `content` field. */
export function genericText(fields: Record<string, unknown>): string | undefined {
  return [fields.message, fields.text, fields.content].find(
    (value) => typeof value === "string" && value !== "",
  ) as string | undefined;
}

/** Where the generic webhook also posts its answer: the body's `callback_url` or `response_url`. */
export function genericCallback(fields: Record<string, unknown>): string | undefined {
  return [fields.callback_url, fields.response_url].find((value) => typeof value === "string") as
    | string
    | undefined;
}
