import type { Inbound } from "../../channels/envelope.ts";
import { casUpdate } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import type { Adapter } from "./sender.ts";

/**
 * Messages let through in a channel's current window (platforms with a `turnLimit`), with each sender's
 * share: keys `<platform>:<channel>`.
 */
export const TURN_COUNTS_SCOPE = "channel_turn_counts";

/** A channel's turns in its current window, and each sender's among them (at most `turns` names). */
interface TurnCount {
  until: number;
  count: number;
  senders?: Record<string, number>;
}

/**
 * Counts one more message of the channel, and of its sender, in its platform's current window (on every
 * node: one state entry per channel, so both counts change together or not at all); null when it is
 * within both, else why it is dropped. A dropped message counts for nothing. Platforms without a turn
 * limit pass everything.
 */
export async function overTurnLimit(
  state: StateClient,
  adapter: Pick<Adapter, "platform" | "turnLimit">,
  message: Pick<Inbound, "channelId" | "userId">,
  nowMs: number,
): Promise<string | null> {
  const limit = adapter.turnLimit;
  if (!limit) return null;
  const until = (Math.floor(nowMs / limit.windowMs) + 1) * limit.windowMs;
  const sender = limit.perSender === undefined ? undefined : message.userId;
  let dropped: string | null = null;
  await casUpdate<TurnCount>(
    state,
    TURN_COUNTS_SCOPE,
    `${adapter.platform}:${message.channelId}`,
    ({ value }) => {
      const current = value?.until === until ? value : { until, count: 0 };
      const senders = current.senders ?? {};
      // Own entries only: a sender id is the platform user's text.
      const mine = sender !== undefined && Object.hasOwn(senders, sender) ? (senders[sender] ?? 0) : 0;
      dropped =
        current.count >= limit.turns
          ? "the channel's turn limit"
          : sender !== undefined && mine >= (limit.perSender ?? limit.turns)
            ? "the sender's share of the channel's turn limit"
            : null;
      if (dropped) return undefined;
      return {
        until,
        count: current.count + 1,
        ...(sender === undefined ? {} : { senders: { ...senders, [sender]: mine + 1 } }),
      };
    },
  );
  return dropped;
}
