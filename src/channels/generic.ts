import { type Envelope, header, hmac, sameSecret } from "./envelope.ts";

/**
 * The generic webhook (`POST /webhook/:channelId`): any system that can sign a JSON or form body. Its
 * one vault entry is per channel, not per platform.
 */
export const genericVaultName = (channelId: string) => `channel:${channelId}:secret`;

/** `X-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>` under the channel's secret. */
export function verifyGenericSignature(envelope: Envelope, secret: string): string | null {
  const signature = header(envelope, "x-signature-256");
  if (!signature) return "Send an API key, or X-Signature-256 when the channel has a secret in the vault";
  return sameSecret(`sha256=${hmac("sha256", secret, envelope.rawBody, "hex")}`, signature)
    ? null
    : "Invalid X-Signature-256";
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
