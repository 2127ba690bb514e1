import { createHash } from "node:crypto";
import type { Inbound } from "../../channels/envelope.ts";
import { casUpdate } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import type { Adapter } from "./sender.ts";

/**
 * Messages let through in the current window: keys `<platform>:<channel>` for a channel's count (with
 * each sender's share, on platforms with a `turnLimit`; messages without a sender elsewhere), and
 * `<platform>/<digest of channel and sender>` for one sender's count in a channel on the others.
 */
export const TURN_COUNTS_SCOPE = "channel_turn_counts";

/**
 * Turns one sender may cause in one channel per SENDER_WINDOW_MS on every platform
 * (AGENTOS_CHANNEL_SENDER_TURNS; 0: no bound): one a message every 10 s for 10 minutes, which no person
 * typing reaches, while a member scripting hundreds of messages cannot spend the agent's budget for
 * everyone else (nor the operator's bill).
 */
export const DEFAULT_SENDER_TURNS = 60;
export const SENDER_WINDOW_MS = 10 * 60_000;

/** A window's turns, each sender's among them (platforms with a `turnLimit`), and whether one was told. */
interface TurnCount {
  until: number;
  count: number;
  senders?: Record<string, number>;
  /** The sender was told, at the first message dropped in this window (so at most once a window). */
  told?: boolean;
}

/** Why a message was dropped, which count it ran past, and whether its sender is to be told now. */
export interface Dropped {
  reason: string;
  over: "channel" | "sender";
  tell: boolean;
}

/**
 * Counts one more message of the channel, and of its sender, in the current window (on every node:
 * one state entry per count, so a check and its count change together or not at all); null when it is
 * within its limits, else why it is dropped. A dropped message counts for nothing.
 *
 * Platforms with a `turnLimit` (Matrix) count the channel and its senders in one entry, a sender's share
 * being the lesser of the platform's and `senderTurns`; their senders may be bots, so none is told. On
 * the others each sender has an entry of their own per channel (a business number's thousands of
 * customers in one entry would make it large, and every message contend for it), messages without a
 * sender count under the channel, and a sender is told once a window.
 */
export async function overTurnLimit(
  state: StateClient,
  adapter: Pick<Adapter, "platform" | "turnLimit">,
  message: Pick<Inbound, "channelId" | "userId">,
  nowMs: number,
  senderTurns = DEFAULT_SENDER_TURNS,
): Promise<Dropped | null> {
  const own = adapter.turnLimit;
  const channelKey = `${adapter.platform}:${message.channelId}`;
  if (own) {
    const sender = message.userId;
    const share = Math.min(own.perSender ?? own.turns, senderTurns > 0 ? senderTurns : own.turns);
    return count(state, channelKey, nowMs, {
      ...own,
      over: "channel",
      reason: "the channel's turn limit",
      ...(sender === undefined
        ? {}
        : { share: { sender, turns: share, reason: "the sender's share of the channel's turn limit" } }),
    });
  }
  if (senderTurns <= 0) return null;
  const window = { turns: senderTurns, windowMs: SENDER_WINDOW_MS };
  if (message.userId === undefined) {
    const reason = "the channel's allowance for messages without a sender (AGENTOS_CHANNEL_SENDER_TURNS)";
    return count(state, channelKey, nowMs, { ...window, over: "channel", reason });
  }
  // A digest: the sender's id is the platform's text, of any length and any characters.
  const digest = createHash("sha256")
    .update(JSON.stringify([message.channelId, message.userId]))
    .digest();
  return count(state, `${adapter.platform}/${digest.toString("base64url")}`, nowMs, {
    ...window,
    over: "sender",
    reason: "the sender's allowance of turns in the channel (AGENTOS_CHANNEL_SENDER_TURNS)",
    tellSender: true,
  });
}

/** What one entry counts: `turns` messages a window, of which at most `share.turns` of one named sender. */
interface Rule {
  turns: number;
  windowMs: number;
  /** Whose count `turns` is (the channel's, or the entry is one sender's), and why past it drops. */
  over: "channel" | "sender";
  reason: string;
  share?: { sender: string; turns: number; reason: string };
  /** The entry is one sender's, on a platform where they may be told (once a window). */
  tellSender?: boolean;
}

async function count(state: StateClient, key: string, nowMs: number, rule: Rule): Promise<Dropped | null> {
  const until = (Math.floor(nowMs / rule.windowMs) + 1) * rule.windowMs;
  const share = rule.share;
  let dropped: Dropped | null = null;
  await casUpdate<TurnCount>(state, TURN_COUNTS_SCOPE, key, ({ value }) => {
    const current = value?.until === until ? value : { until, count: 0 };
    const senders = current.senders ?? {};
    // Own entries only: a sender id is the platform user's text.
    const mine = share && Object.hasOwn(senders, share.sender) ? (senders[share.sender] ?? 0) : 0;
    if (current.count >= rule.turns) {
      dropped = { reason: rule.reason, over: rule.over, tell: rule.tellSender === true && !current.told };
    } else if (share && mine >= share.turns) {
      dropped = { reason: share.reason, over: "sender", tell: false };
    } else {
      dropped = null;
      return {
        ...current,
        count: current.count + 1,
        ...(share ? { senders: { ...senders, [share.sender]: mine + 1 } } : {}),
      };
    }
    // The only write a dropped message makes: that its sender has been told, once a window.
    return dropped.tell ? { ...current, told: true } : undefined;
  });
  return dropped;
}
