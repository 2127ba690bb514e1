import type { Envelope, Inbound } from "../envelope.ts";

interface Payload {
  object?: string;
  entry?: Array<{
    changes?: Array<{
      value?: {
        metadata?: { phone_number_id?: string };
        messages?: Array<{ from?: string; id?: string; type?: string; text?: { body?: string } }>;
      };
    }>;
  }>;
}

/** Text messages of a WhatsApp Business account (statuses and other types are acknowledged and skipped). */
export function parseWhatsapp(envelope: Envelope) {
  const payload = (envelope.body ?? {}) as Payload;
  if (payload.object !== "whatsapp_business_account") return { messages: [] };
  const messages: Inbound[] = [];
  for (const entry of payload.entry ?? []) {
    for (const change of entry.changes ?? []) {
      const phoneId = change.value?.metadata?.phone_number_id;
      for (const message of change.value?.messages ?? []) {
        if (message.type !== "text" || !message.text?.body?.trim() || !message.from || !phoneId) continue;
        messages.push({
          channelId: message.from,
          userId: message.from,
          text: message.text.body,
          eventId: message.id,
          replyTo: { phone_number_id: phoneId, to: message.from },
        });
      }
    }
  }
  return { messages };
}
