import type { Envelope, Inbound } from "../envelope.ts";

interface Payload {
  events?: Array<{
    type?: string;
    webhookEventId?: string;
    message?: { type?: string; id?: string; text?: string };
    source?: { type?: string; userId?: string; groupId?: string; roomId?: string };
  }>;
}

/** Text messages from users, groups and rooms; replies are pushed to the same place. */
export function parseLine(envelope: Envelope) {
  const messages: Inbound[] = [];
  for (const event of ((envelope.body ?? {}) as Payload).events ?? []) {
    if (event.type !== "message" || event.message?.type !== "text" || !event.message.text?.trim()) continue;
    const to = event.source?.groupId ?? event.source?.roomId ?? event.source?.userId;
    if (!to) continue;
    messages.push({
      channelId: to,
      userId: event.source?.userId,
      text: event.message.text,
      eventId: event.webhookEventId ?? event.message.id,
      replyTo: { to },
    });
  }
  return { messages };
}
