import { createHmac, timingSafeEqual } from "node:crypto";

/** The raw request a channel function receives (DESIGN §6): signatures are over `rawBody`. */
export interface Envelope {
  body: unknown;
  rawBody: string;
  headers: Record<string, string | string[] | undefined>;
  query_params: Record<string, unknown>;
  path_params: Record<string, string>;
  method: string;
  path: string;
}

/** What a channel function answers. */
export interface Reply {
  status_code: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** One message of a platform event, in the shape every adapter maps to. */
export interface Inbound {
  /** The platform's conversation (channel, chat, room, repository issue…): the binding key. */
  channelId: string;
  userId?: string;
  text: string;
  /** The platform's id of the event, to drop retried deliveries. */
  eventId?: string;
  /** What `send` needs to answer in the same place (chat id, thread, reply token…). */
  replyTo: Record<string, unknown>;
}

export interface SendContext {
  /** The platform's API base URL (`<PLATFORM>_API_BASE_URL` overrides it, for tests and proxies). */
  baseUrl: string;
  /** The outbound credential from the vault (`channel:<platform>:<tokenName>`), if the adapter has one. */
  token?: string;
}

/**
 * One chat platform: how it proves a request is its own, how its events map to messages, and how a
 * reply goes back. Everything else (secrets, dedupe, bindings, the durable reply queue, audit) is the
 * pipeline's, written once.
 */
export interface Adapter {
  platform: string;
  /** Vault name of the verification secret: `channel:<platform>:<secretName>`. */
  secretName: string;
  /** Vault name of the credential for replies, when the platform needs one. */
  tokenName?: string;
  defaultBaseUrl: string;
  /** Longest message the platform takes (characters), and how many parts one reply may have. */
  maxChunk: number;
  maxParts?: number;
  /** Routes besides `POST /webhook/<platform>` (Matrix's transaction PUTs). */
  routes?: Array<{ method: "PUT" | "POST"; path: string }>;
  /** GET handshakes (Meta's hub.challenge): answered only when they prove the secret. */
  verifyGet?(envelope: Envelope, secret: string): Reply;
  /** null when the request is the platform's, else why not. */
  verify(envelope: Envelope, secret: string, nowMs: number, env: NodeJS.ProcessEnv): string | null;
  /**
   * Platforms that take the answer in the webhook's own response (Teams outgoing webhooks): the reply
   * as that response. The turn then runs at once, within `syncTimeoutMs`; a slower one is queued.
   */
  respond?(text: string): Reply;
  syncTimeoutMs?: number;
  /** The messages of an event, or an immediate answer (a URL challenge, Discord's PONG). */
  parse(envelope: Envelope): { messages: Inbound[]; reply?: Reply };
  send(context: SendContext, replyTo: Record<string, unknown>, text: string): Promise<void>;
}

/**
 * The vault names an adapter reads, each `channel:<platform>:<name>`: spelled here only, so the
 * pipeline, the bind warnings and the migrators (which write them) cannot drift apart.
 */
export interface VaultNames {
  /** Proves a request is the platform's; without it the webhook refuses everything. */
  secret: string;
  /** The credential replies are sent with (absent: the platform needs none). */
  token?: string;
  /** Meta's GET handshake (hub.verify_token), for the platforms that have one. */
  verifyToken?: string;
}

export function vaultNames(adapter: Adapter): VaultNames {
  const name = (suffix: string) => `channel:${adapter.platform}:${suffix}`;
  return {
    secret: name(adapter.secretName),
    ...(adapter.tokenName ? { token: name(adapter.tokenName) } : {}),
    ...(adapter.verifyGet ? { verifyToken: name("verify_token") } : {}),
  };
}

export function header(envelope: Envelope, name: string): string | undefined {
  const value = envelope.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** Constant-time comparison of two strings (false for different lengths, without leaking where). */
export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export const hmac = (
  algorithm: "sha1" | "sha256",
  key: string | Buffer,
  data: string,
  encoding: "hex" | "base64",
) => createHmac(algorithm, key).update(data, "utf8").digest(encoding);

/**
 * A reply in parts of at most `max` characters: cut at the last space before the limit (else a hard
 * cut), each part trimmed, empty parts dropped, at most `maxParts` (the last one then ends with "…").
 */
export function splitReply(text: string, max: number, maxParts = Number.POSITIVE_INFINITY): string[] {
  const parts: string[] = [];
  let rest = text.trim();
  while (rest.length > 0) {
    if (rest.length <= max) {
      parts.push(rest);
      break;
    }
    const space = rest.lastIndexOf(" ", max);
    const cut = space > 0 ? space : max;
    const part = rest.slice(0, cut).trim();
    if (part) parts.push(part);
    rest = rest.slice(cut).trim();
  }
  if (parts.length > maxParts) {
    const kept = parts.slice(0, maxParts);
    const last = kept[maxParts - 1] as string;
    kept[maxParts - 1] = `${last.slice(0, max - 1)}…`;
    return kept;
  }
  return parts;
}

export const ok = (body: unknown = { ok: true }): Reply => ({ status_code: 200, body });
export const refused = (message: string): Reply => ({ status_code: 401, body: { error: message } });

/** A JSON POST to a platform API; a non-2xx answer is an error naming the status and the start of the body. */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<unknown> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  if (!response.ok)
    throw new Error(`${new URL(url).host} answered ${response.status}: ${text.slice(0, 300)}`);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
