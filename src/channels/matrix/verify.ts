import { type Envelope, header, sameSecret } from "../envelope.ts";

/** A Matrix homeserver calls an application service with its hs_token (Bearer, or `access_token`). */
export function verifyMatrix(envelope: Envelope, hsToken: string): string | null {
  const bearer = /^Bearer\s+(.+)$/i.exec(header(envelope, "authorization") ?? "")?.[1];
  const token = bearer ?? (envelope.query_params as Record<string, string | undefined>).access_token;
  if (!token) return "Missing the homeserver token (Authorization: Bearer)";
  return sameSecret(token, hsToken) ? null : "Invalid homeserver token";
}
