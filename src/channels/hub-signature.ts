import { type Envelope, header, hmac, type Reply, sameSecret } from "./envelope.ts";

/** GitHub (and Meta): `sha256=` + hex HMAC-SHA256 of the raw body in X-Hub-Signature-256. */
export function verifyHubSignature(envelope: Envelope, secret: string): string | null {
  const signature = header(envelope, "x-hub-signature-256");
  if (!signature) return "Missing X-Hub-Signature-256";
  return sameSecret(`sha256=${hmac("sha256", secret, envelope.rawBody, "hex")}`, signature)
    ? null
    : "Invalid X-Hub-Signature-256";
}

/** Meta's webhook subscription handshake (GET): `hub.challenge` back when `hub.verify_token` matches. */
export function verifyMetaSubscription(envelope: Envelope, verifyToken: string): Reply {
  const query = envelope.query_params as Record<string, string | undefined>;
  if (query["hub.mode"] !== "subscribe" || !sameSecret(query["hub.verify_token"] ?? "", verifyToken)) {
    return { status_code: 403, body: { error: "hub.verify_token does not match" } };
  }
  return { status_code: 200, body: String(query["hub.challenge"] ?? "") };
}
