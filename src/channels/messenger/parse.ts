import { z } from "zod";
import { type Envelope, type Inbound, readEvent } from "../envelope.ts";

const payload = z.looseObject({
  object: z.unknown(),
  entry: z
    .array(
      z.looseObject({
        messaging: z
          .array(
            z.looseObject({
              sender: z.looseObject({ id: z.string().nullish() }).nullish(),
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

/** Messages sent to a Page (the Page's own echoes are skipped). */
export function parseMessenger(envelope: Envelope) {
  const { object, entry } = readEvent("messenger", payload, envelope.body);
  if (object !== "page") return { messages: [] };
  const messages: Inbound[] = [];
  for (const { messaging } of entry ?? []) {
    for (const event of messaging ?? []) {
      const sender = event.sender?.id;
      if (!sender || !event.message?.text?.trim() || event.message.is_echo) continue;
      messages.push({
        channelId: sender,
        userId: sender,
        text: event.message.text,
        eventId: event.message.mid ?? undefined,
        replyTo: { recipient: sender },
      });
    }
  }
  return { messages };
}
