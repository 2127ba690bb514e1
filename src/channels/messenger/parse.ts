import type { Envelope, Inbound } from "../envelope.ts";

interface Payload {
  object?: string;
  entry?: Array<{
    messaging?: Array<{
      sender?: { id?: string };
      message?: { mid?: string; text?: string; is_echo?: boolean };
    }>;
  }>;
}

/** Messages sent to a Page (the Page's own echoes are skipped). */
export function parseMessenger(envelope: Envelope) {
  const payload = (envelope.body ?? {}) as Payload;
  if (payload.object !== "page") return { messages: [] };
  const messages: Inbound[] = [];
  for (const entry of payload.entry ?? []) {
    for (const event of entry.messaging ?? []) {
      const sender = event.sender?.id;
      if (!sender || !event.message?.text?.trim() || event.message.is_echo) continue;
      messages.push({
        channelId: sender,
        userId: sender,
        text: event.message.text,
        eventId: event.message.mid,
        replyTo: { recipient: sender },
      });
    }
  }
  return { messages };
}
