import type { Envelope, Inbound } from "../envelope.ts";

interface Update {
  update_id?: number;
  message?: {
    text?: string;
    chat?: { id?: number | string };
    from?: { id?: number | string; is_bot?: boolean };
  };
}

/** A text message (edits, channel posts and other updates are acknowledged and skipped). */
export function parseTelegram(envelope: Envelope) {
  const update = (envelope.body ?? {}) as Update;
  const message = update.message;
  if (!message?.text?.trim() || message.chat?.id === undefined || message.from?.is_bot)
    return { messages: [] };
  const chatId = String(message.chat.id);
  const inbound: Inbound = {
    channelId: chatId,
    userId: message.from?.id === undefined ? undefined : String(message.from.id),
    text: message.text,
    eventId: update.update_id === undefined ? undefined : String(update.update_id),
    replyTo: { chat_id: chatId },
  };
  return { messages: [inbound] };
}
