import { postJson, type Sender } from "../sender.ts";

export const discord: Sender = {
  defaultBaseUrl: "https://discord.com/api/v10",
  async send({ baseUrl }, replyTo, text) {
    // The interaction's own webhook (valid 15 minutes): no bot token needed. An agent's @everyone,
    // role or user mention (a chat user can prompt one) is shown, never pinged.
    await postJson(`${baseUrl}/webhooks/${replyTo.application_id}/${replyTo.token}`, {
      content: text,
      allowed_mentions: { parse: [] },
    });
  },
};
