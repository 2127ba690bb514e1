import type { Envelope, Inbound } from "../envelope.ts";

/** An incoming SMS (form fields From, To, Body, MessageSid, AccountSid). */
export function parseTwilio(envelope: Envelope) {
  const form = (envelope.body ?? {}) as Record<string, string | undefined>;
  if (!form.From || !form.To || !form.Body?.trim() || !form.AccountSid) return { messages: [] };
  const message: Inbound = {
    channelId: form.From,
    userId: form.From,
    text: form.Body,
    eventId: form.MessageSid,
    replyTo: { account: form.AccountSid, to: form.From, from: form.To },
  };
  return { messages: [message] };
}
