import { type Envelope, type Inbound, ok } from "../envelope.ts";

interface SlackBody {
  type?: string;
  challenge?: string;
  event_id?: string;
  event?: {
    type?: string;
    subtype?: string;
    bot_id?: string;
    text?: string;
    channel?: string;
    user?: string;
    ts?: string;
    thread_ts?: string;
  };
}

/** Events API: the URL challenge, and user messages (bots, edits and other subtypes are skipped). */
export function parseSlack(envelope: Envelope) {
  const body = (envelope.body ?? {}) as SlackBody;
  if (body.type === "url_verification")
    return { messages: [], reply: ok({ challenge: body.challenge ?? "" }) };
  const event = body.event;
  if (body.type !== "event_callback" || !event || !["message", "app_mention"].includes(event.type ?? ""))
    return { messages: [] };
  if (event.bot_id || event.subtype || !event.channel || !event.text?.trim()) return { messages: [] };
  const message: Inbound = {
    channelId: event.channel,
    userId: event.user,
    text: event.text,
    eventId: body.event_id,
    replyTo: { channel: event.channel, thread_ts: event.thread_ts ?? event.ts },
  };
  return { messages: [message] };
}
