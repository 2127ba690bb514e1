import { z } from "zod";
import { type Envelope, type Inbound, readEvent } from "../envelope.ts";

const payload = z.looseObject({
  object: z.unknown(),
  entry: z
    .array(
      z.looseObject({
        changes: z
          .array(
            z.looseObject({
              value: z
                .looseObject({
                  metadata: z.looseObject({ phone_number_id: z.string().nullish() }).nullish(),
                  messages: z
                    .array(
                      z.looseObject({
                        from: z.string().nullish(),
                        id: z.string().nullish(),
                        type: z.string().nullish(),
                        text: z.looseObject({ body: z.string().nullish() }).nullish(),
                      }),
                    )
                    .nullish(),
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
 * Text messages of a WhatsApp Business account (statuses and other types are acknowledged and skipped).
 * The channel is the business number a message came to (its `metadata.phone_number_id`): one webhook
 * serves every number of the app, and each number is bound on its own. The customer (`from`) is the
 * conversation, so each has a session of their own.
 */
export function parseWhatsapp(envelope: Envelope) {
  const { object, entry } = readEvent("whatsapp", payload, envelope.body);
  if (object !== "whatsapp_business_account") return { messages: [] };
  const messages: Inbound[] = [];
  for (const { changes } of entry ?? []) {
    for (const change of changes ?? []) {
      const phoneId = change.value?.metadata?.phone_number_id;
      for (const message of change.value?.messages ?? []) {
        if (message.type !== "text" || !message.text?.body?.trim() || !message.from || !phoneId) continue;
        messages.push({
          channelId: phoneId,
          conversationId: message.from,
          userId: message.from,
          text: message.text.body,
          eventId: message.id ?? undefined,
          replyTo: { phone_number_id: phoneId, to: message.from },
        });
      }
    }
  }
  return { messages };
}
