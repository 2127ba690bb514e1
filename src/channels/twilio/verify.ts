import { type Envelope, header, hmac, sameSecret } from "../envelope.ts";

/**
 * Twilio: X-Twilio-Signature is the base64 HMAC-SHA1, under the account's auth token, of the full URL
 * Twilio called followed by each POST parameter's name and value, sorted by name. The URL is the
 * service's public one: AGENTOS_PUBLIC_URL when set, else as forwarded or received.
 */
export function verifyTwilio(envelope: Envelope, authToken: string, publicUrl?: string): string | null {
  const signature = header(envelope, "x-twilio-signature");
  if (!signature) return "Missing X-Twilio-Signature";
  const params = (envelope.body ?? {}) as Record<string, unknown>;
  const data = Object.keys(params)
    .sort()
    .reduce((text, name) => text + name + String(params[name] ?? ""), twilioUrl(envelope, publicUrl));
  return sameSecret(hmac("sha1", authToken, data, "base64"), signature) ? null : "Invalid X-Twilio-Signature";
}

export function twilioUrl(envelope: Envelope, publicUrl?: string): string {
  const query = new URLSearchParams(envelope.query_params as Record<string, string>).toString();
  const path = `${envelope.path}${query ? `?${query}` : ""}`;
  if (publicUrl) return `${publicUrl.replace(/\/$/, "")}${path}`;
  const proto = header(envelope, "x-forwarded-proto") ?? "http";
  const host = header(envelope, "x-forwarded-host") ?? header(envelope, "host") ?? "localhost";
  return `${proto}://${host}${path}`;
}
