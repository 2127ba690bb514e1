import { z } from "zod";
import { type Envelope, type Inbound, readEvent } from "../envelope.ts";

const payload = z.looseObject({
  object: z.unknown(),
  entry: z
    .array(
      z.looseObject({
        id: z.string().nullish(),
        messaging: z
          .array(
            z.looseObject({
              sender: z.looseObject({ id: z.string().nullish() }).nullish(),
              recipient: z.looseObject({ id: z.string().nullish() }).nullish(),
              message: z
                .looseObject({
                  mid: z.string().nullish(),
                  text: z.string().nullish(),
                  is_echo: z.boolean().nullish(),
                })
                .nullish(),
            }),
          )
          .nullish(),
      }),
    )
    .nullish(),
});

/**
 * Messages sent to a Page (the Page's own echoes are skipped). The channel is the Page a message came to
 * (its entry's `id`, the event's `recipient`): one app's webhook serves every Page subscribed to it, and
 * each Page is bound on its own. The customer (`sender`, a Page-scoped id) is the conversation, so each
 * has a session of their own.
 */
export function parseMessenger(envelope: Envelope) {
  const { object, entry } = readEvent("messenger", payload, envelope.body);
  if (object !== "page") return { messages: [] };
  const messages: Inbound[] = [];
  for (const { id, messaging } of entry ?? []) {
    for (const event of messaging ?? []) {
      const sender = event.sender?.id;
      const page = id ?? event.recipient?.id;
      if (!sender || !page || !event.message?.text?.trim() || event.message.is_echo) continue;
      messages.push({
        channelId: page,
        conversationId: sender,
        userId: sender,
        text: event.message.text,
        eventId: event.message.mid ?? undefined,
        replyTo: { page, recipient: sender },
      });
    }
  }
  return { messages };
}
