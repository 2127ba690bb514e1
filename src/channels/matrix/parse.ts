import type { Envelope, Inbound } from "../envelope.ts";

/** Marks the messages this service sends, so their echo in the next transaction is not answered. */
export const OWN_MARK = "agentos.reply";

interface Transaction {
  events?: Array<{
    type?: string;
    event_id?: string;
    room_id?: string;
    sender?: string;
    content?: Record<string, unknown>;
  }>;
}

/** Text messages of a transaction's events. */
export function parseMatrix(envelope: Envelope) {
  const messages: Inbound[] = [];
  for (const event of ((envelope.body ?? {}) as Transaction).events ?? []) {
    const content = event.content ?? {};
    if (event.type !== "m.room.message" || content.msgtype !== "m.text" || content[OWN_MARK] === true)
      continue;
    if (typeof content.body !== "string" || !content.body.trim() || !event.room_id) continue;
    messages.push({
      channelId: event.room_id,
      userId: event.sender,
      text: content.body,
      eventId: event.event_id,
      replyTo: { room: event.room_id },
    });
  }
  return { messages, reply: { status_code: 200, body: {} } };
}
