import { z } from "zod";
import { type Envelope, type Inbound, ok, readEvent } from "../envelope.ts";

const slackBody = z.looseObject({
  type: z.string().nullish(),
  challenge: z.string().nullish(),
  event_id: z.string().nullish(),
  // Other event types give these names other shapes (channel_created's `channel` is an object).
  event: z.looseObject({ type: z.unknown() }).nullish(),
});
const slackMessage = z.looseObject({
  subtype: z.string().nullish(),
  bot_id: z.string().nullish(),
  text: z.string().nullish(),
  channel: z.string().nullish(),
  user: z.string().nullish(),
  ts: z.string().nullish(),
  thread_ts: z.string().nullish(),
});

/** Events API: the URL challenge, and user messages (bots, edits and other subtypes are skipped). */
export function parseSlack(envelope: Envelope) {
  const body = readEvent("slack", slackBody, envelope.body);
  if (body.type === "url_verification")
    return { messages: [], reply: ok({ challenge: body.challenge ?? "" }) };
  if (body.type !== "event_callback" || !["message", "app_mention"].includes(String(body.event?.type)))
    return { messages: [] };
  const event = readEvent("slack", z.object({ event: slackMessage }), body).event;
  if (event.bot_id || event.subtype || !event.channel || !event.text?.trim()) return { messages: [] };
  const message: Inbound = {
    channelId: event.channel,
    userId: event.user ?? undefined,
    text: event.text,
    // A mention in a channel comes as app_mention and as message, each with its own event_id: the
    // message's channel and ts name it once, in both and in their retries.
    eventId: event.ts ? `${event.channel}:${event.ts}` : (body.event_id ?? undefined),
    replyTo: { channel: event.channel, thread_ts: event.thread_ts ?? event.ts },
  };
  return { messages: [message] };
}
