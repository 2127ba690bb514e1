import type { Envelope, Inbound } from "../envelope.ts";

interface Activity {
  type?: string;
  id?: string;
  text?: string;
  from?: { id?: string };
  conversation?: { id?: string };
}

/** A message activity; the bot's @mention (`<at>…</at>`) and other tags are removed from the text. */
export function parseTeams(envelope: Envelope) {
  const activity = (envelope.body ?? {}) as Activity;
  const text = (activity.text ?? "")
    .replace(/<at>[^<]*<\/at>/g, "")
    .replace(/<[^>]+>/g, "")
    .replace(/&nbsp;/g, " ")
    .trim();
  if (activity.type !== "message" || !text || !activity.conversation?.id) return { messages: [] };
  const message: Inbound = {
    channelId: activity.conversation.id,
    userId: activity.from?.id,
    text,
    eventId: activity.id,
    replyTo: {},
  };
  return { messages: [message] };
}
