import { z } from "zod";
import { type Envelope, type Inbound, readEvent } from "../envelope.ts";

const field = z.string().optional();
const form = z.looseObject({ From: field, To: field, Body: field, MessageSid: field, AccountSid: field });

/**
 * An incoming SMS (form fields From, To, Body, MessageSid, AccountSid). The channel is the Twilio number
 * it came to (`To`): one webhook may serve several numbers, each bound on its own. The sender (`From`) is
 * the conversation, so each has a session of their own.
 */
export function parseTwilio(envelope: Envelope) {
  const sms = readEvent("twilio", form, envelope.body);
  if (!sms.From || !sms.To || !sms.Body?.trim() || !sms.AccountSid) return { messages: [] };
  const message: Inbound = {
    channelId: sms.To,
    conversationId: sms.From,
    userId: sms.From,
    text: sms.Body,
    eventId: sms.MessageSid,
    replyTo: { account: sms.AccountSid, to: sms.From, from: sms.To },
  };
  return { messages: [message] };
}
