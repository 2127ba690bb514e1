import { type Envelope, type Inbound, ok } from "../envelope.ts";

interface Interaction {
  id?: string;
  type?: number;
  application_id?: string;
  token?: string;
  channel_id?: string;
  member?: { user?: { id?: string } };
  user?: { id?: string };
  data?: { name?: string; options?: Array<{ value?: unknown }> };
}

/**
 * PING is answered with PONG; a slash command is deferred at once (type 5, "thinking…") and its answer
 * follows through the interaction's webhook; anything else is acknowledged.
 */
export function parseDiscord(envelope: Envelope) {
  const interaction = (envelope.body ?? {}) as Interaction;
  if (interaction.type === 1) return { messages: [], reply: ok({ type: 1 }) };
  if (
    interaction.type !== 2 ||
    !interaction.channel_id ||
    !interaction.token ||
    !interaction.application_id
  ) {
    return { messages: [], reply: ok({ type: 1 }) };
  }
  const options = (interaction.data?.options ?? [])
    .map((option) => String(option.value ?? ""))
    .filter(Boolean);
  const message: Inbound = {
    channelId: interaction.channel_id,
    userId: interaction.member?.user?.id ?? interaction.user?.id,
    text: options.length > 0 ? options.join(" ") : `/${interaction.data?.name ?? ""}`,
    eventId: interaction.id,
    replyTo: { application_id: interaction.application_id, token: interaction.token },
  };
  return { messages: [message], reply: ok({ type: 5 }) };
}
