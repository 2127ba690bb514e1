import { createHmac, timingSafeEqual } from "node:crypto";
import type { z } from "zod";
import { badRequest, describeZodError } from "../shared/errors.ts";

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
  /**
   * What the service is reached at on the platform (channel, chat, room, repository issue, business
   * number…): the binding key.
   */
  channelId: string;
  /**
   * Where one channel holds many separate conversations (a business number's customers): the one this
   * message belongs to. The session is then `<platform>:<channel>:<conversation>`, one per conversation.
   */
  conversationId?: string;
  userId?: string;
  text: string;
  /** The platform's id of the event, to drop retried deliveries. */
  eventId?: string;
  /** What the sender needs to answer in the same place (chat id, thread, reply token…). */
  replyTo: Record<string, unknown>;
}

/** An event's messages, or an immediate answer (a URL challenge, Discord's PONG). */
export interface ParsedEvent {
  messages: Inbound[];
  reply?: Reply;
}

/**
 * The fields a parser reads, typed as the platform documents them. A body that gives them other types
 * (only a sender holding the secret can, the platform never does) is a 400 naming the fields, not a
 * TypeError halfway through the parser.
 */
export function readEvent<Schema extends z.ZodType>(
  platform: string,
  schema: Schema,
  body: unknown,
): z.infer<Schema> {
  const read = schema.safeParse(body ?? {});
  if (!read.success)
    throw badRequest(`Not a ${platform} event this service can read: ${describeZodError(read.error)}`);
  return read.data;
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

export const ok = (body: unknown = { ok: true }): Reply => ({ status_code: 200, body });
export const refused = (message: string): Reply => ({ status_code: 401, body: { error: message } });
