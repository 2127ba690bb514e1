import { z } from "zod";
import { type Envelope, type Inbound, readEvent } from "../envelope.ts";

const id = z.union([z.number(), z.string()]).nullish();
const update = z.looseObject({
  update_id: z.number().nullish(),
  message: z
    .looseObject({
      text: z.string().nullish(),
      chat: z.looseObject({ id }).nullish(),
      from: z.looseObject({ id, is_bot: z.boolean().nullish() }).nullish(),
    })
    .nullish(),
});

/** A text message (edits, channel posts and other updates are acknowledged and skipped). */
export function parseTelegram(envelope: Envelope) {
  const { update_id, message } = readEvent("telegram", update, envelope.body);
  if (!message?.text?.trim() || message.chat?.id == null || message.from?.is_bot) return { messages: [] };
  const chatId = String(message.chat.id);
  const inbound: Inbound = {
    channelId: chatId,
    userId: message.from?.id == null ? undefined : String(message.from.id),
    text: message.text,
    eventId: update_id == null ? undefined : String(update_id),
    replyTo: { chat_id: chatId },
  };
  return { messages: [inbound] };
}
