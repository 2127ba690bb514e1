import type { Envelope, ParsedEvent, Reply } from "./envelope.ts";

/**
 * The vault names a platform reads, each `channel:<platform>:<name>`: spelled in the platform's
 * definition only, so the pipeline, the bind warnings and the migrators (which write them) cannot
 * drift apart.
 */
export interface VaultNames {
  /** Proves a request is the platform's; without it the webhook refuses everything. */
  secret: string;
  /** The credential replies are sent with (absent: the platform needs none). */
  token?: string;
  /** Meta's GET handshake (hub.verify_token), for the platforms that have one. */
  verifyToken?: string;
}

/**
 * One chat platform as pure knowledge, no I/O: how it proves a request is its own, how its events map
 * to messages, how long a message may be, where an agent may start a conversation, and which vault
 * entries it reads. Sending (HTTP to the platform's API) is the channels worker's.
 */
export interface Platform<Name extends string = string> {
  platform: Name;
  vault: VaultNames;
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
  parse(envelope: Envelope): ParsedEvent;
  /**
   * Where the platform does not say which senders are bots (Matrix): at most `turns` messages of one
   * channel reach its agent per `windowMs`, the others are acknowledged and dropped. Two bots answering
   * each other stop at the first message dropped, having cost at most `turns` turns. One sender gets at
   * most `perSender` of a window's turns (or AGENTOS_CHANNEL_SENDER_TURNS, if less), so a single member
   * cannot spend the room's and silence the agent for everyone else. Its senders are never told they
   * were dropped (they may be bots, which would answer); on other platforms, which only bound each
   * sender (AGENTOS_CHANNEL_SENDER_TURNS), a sender is told once a window.
   */
  turnLimit?: { turns: number; windowMs: number; perSender?: number };
  /**
   * Where each channel has a credential of its own (a Facebook Page's access token): its vault name for
   * a channel, and the channel a queued reply goes out from (read from its `replyTo`). It is read before
   * `vault.token`, which then serves a service with one such channel.
   */
  channelToken?: {
    name(channelId: string): string;
    channelOf(replyTo: Record<string, unknown>): string | undefined;
    /**
     * An agent's unprompted message (`tool::channel_send`) goes only with the channel's own credential:
     * the platform's one leads to one fixed place (a Teams incoming webhook posts into the channel it
     * was made in), which another channel's binding must not reach.
     */
    ownForUnprompted?: boolean;
  };
  /**
   * Where an agent's unprompted message to a bound channel goes, from the channel id alone; absent
   * where a platform only lets a bot answer (an interaction's token, the number a message came to).
   */
  replyTarget?(channelId: string): Record<string, unknown>;
}
