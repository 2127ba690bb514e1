import { z } from "zod";
import { type Envelope, type Inbound, readEvent } from "../envelope.ts";

/** Marks the messages this service sends, so their echo in the next transaction is not answered. */
export const OWN_MARK = "agentos.reply";

const transaction = z.looseObject({
  events: z
    .array(
      z.looseObject({
        type: z.string().nullish(),
        event_id: z.string().nullish(),
        room_id: z.string().nullish(),
        sender: z.string().nullish(),
        content: z.record(z.string(), z.unknown()).nullish(),
      }),
    )
    .nullish(),
});

/**
 * Text messages of a transaction's events. Only `m.text` is answered: `m.notice` is what bots send and,
 * by the specification, must never be answered automatically (so two bots cannot loop on it); the
 * service's own messages (notices, marked) are skipped either way.
 */
export function parseMatrix(envelope: Envelope) {
  const messages: Inbound[] = [];
  for (const event of readEvent("matrix", transaction, envelope.body).events ?? []) {
    const content = event.content ?? {};
    if (event.type !== "m.room.message" || content.msgtype !== "m.text" || content[OWN_MARK] === true)
      continue;
    if (typeof content.body !== "string" || !content.body.trim() || !event.room_id) continue;
    messages.push({
      channelId: event.room_id,
      userId: event.sender ?? undefined,
      text: content.body,
      eventId: event.event_id ?? undefined,
      replyTo: { room: event.room_id },
    });
  }
  return { messages, reply: { status_code: 200, body: {} } };
}
