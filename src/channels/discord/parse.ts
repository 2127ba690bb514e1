import { z } from "zod";
import { type Envelope, type Inbound, ok, readEvent } from "../envelope.ts";

const user = z.looseObject({ id: z.string().nullish() });
const interaction = z.looseObject({
  id: z.string().nullish(),
  type: z.unknown(),
  application_id: z.string().nullish(),
  token: z.string().nullish(),
  channel_id: z.string().nullish(),
  member: z.looseObject({ user: user.nullish() }).nullish(),
  user: user.nullish(),
  data: z
    .looseObject({
      name: z.string().nullish(),
      options: z.array(z.looseObject({ value: z.unknown() })).nullish(),
    })
    .nullish(),
});

/**
 * PING is answered with PONG; a slash command is deferred at once (type 5, "thinking…") and its answer
 * follows through the interaction's webhook; anything else is acknowledged.
 */
export function parseDiscord(envelope: Envelope) {
  const { type } = readEvent("discord", z.looseObject({ type: z.unknown() }), envelope.body);
  if (type === 1) return { messages: [], reply: ok({ type: 1 }) };
  if (type !== 2) return { messages: [], reply: ok({ type: 1 }) };
  // Only a command's fields are read: other interaction types may shape `data` otherwise.
  const command = readEvent("discord", interaction, envelope.body);
  if (!command.channel_id || !command.token || !command.application_id) {
    return { messages: [], reply: ok({ type: 1 }) };
  }
  const options = (command.data?.options ?? []).map((option) => String(option.value ?? "")).filter(Boolean);
  const message: Inbound = {
    channelId: command.channel_id,
    userId: command.member?.user?.id ?? command.user?.id ?? undefined,
    text: options.length > 0 ? options.join(" ") : `/${command.data?.name ?? ""}`,
    eventId: command.id ?? undefined,
    replyTo: { application_id: command.application_id, token: command.token },
  };
  return { messages: [message], reply: ok({ type: 5 }) };
}
