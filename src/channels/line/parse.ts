import { z } from "zod";
import { type Envelope, type Inbound, readEvent } from "../envelope.ts";

const payload = z.looseObject({
  events: z
    .array(
      z.looseObject({
        type: z.string().nullish(),
        webhookEventId: z.string().nullish(),
        message: z
          .looseObject({ type: z.string().nullish(), id: z.string().nullish(), text: z.string().nullish() })
          .nullish(),
        source: z
          .looseObject({
            userId: z.string().nullish(),
            groupId: z.string().nullish(),
            roomId: z.string().nullish(),
          })
          .nullish(),
      }),
    )
    .nullish(),
});

/** Text messages from users, groups and rooms; replies are pushed to the same place. */
export function parseLine(envelope: Envelope) {
  const messages: Inbound[] = [];
  for (const event of readEvent("line", payload, envelope.body).events ?? []) {
    if (event.type !== "message" || event.message?.type !== "text" || !event.message.text?.trim()) continue;
    const to = event.source?.groupId ?? event.source?.roomId ?? event.source?.userId;
    if (!to) continue;
    messages.push({
      channelId: to,
      userId: event.source?.userId ?? undefined,
      text: event.message.text,
      eventId: event.webhookEventId ?? event.message.id ?? undefined,
      replyTo: { to },
    });
  }
  return { messages };
}
