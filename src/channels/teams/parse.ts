import { z } from "zod";
import { type Envelope, type Inbound, readEvent } from "../envelope.ts";

const activity = z.looseObject({
  type: z.string().nullish(),
  id: z.string().nullish(),
  text: z.string().nullish(),
  from: z.looseObject({ id: z.string().nullish() }).nullish(),
  conversation: z.looseObject({ id: z.string().nullish() }).nullish(),
});

/** A message activity; the bot's @mention (`<at>…</at>`) and other tags are removed from the text. */
export function parseTeams(envelope: Envelope) {
  const { type, id, text: html, from, conversation } = readEvent("teams", activity, envelope.body);
  const text = (html ?? "")
    .replace(/<at>[^<]*<\/at>/g, "")
    .replace(/<[^>]+>/g, "")
    .replace(/&nbsp;/g, " ")
    .trim();
  if (type !== "message" || !text || !conversation?.id) return { messages: [] };
  const message: Inbound = {
    // A channel's conversation id names the thread too (`19:…@thread.tacv2;messageid=<root>`): the
    // binding is the channel's, so every thread reaches its agent.
    channelId: channelOf(conversation.id),
    userId: from?.id ?? undefined,
    text,
    eventId: id ?? undefined,
    replyTo: { conversation: channelOf(conversation.id) },
  };
  return { messages: [message] };
}

/** A channel's conversation id without the thread it names (`;messageid=<root>`). */
function channelOf(conversationId: string): string {
  return conversationId.split(";")[0] as string;
}
