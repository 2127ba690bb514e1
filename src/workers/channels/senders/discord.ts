import { type Adapter, postJson } from "../adapter.ts";
import { parseDiscord } from "./parse.ts";
import { verifyDiscord } from "./verify.ts";

export const discord: Adapter = {
  platform: "discord",
  secretName: "public_key",
  defaultBaseUrl: "https://discord.com/api/v10",
  maxChunk: 2000,
  verify: verifyDiscord,
  parse: parseDiscord,
  async send({ baseUrl }, replyTo, text) {
    // The interaction's own webhook (valid 15 minutes): no bot token needed.
    await postJson(`${baseUrl}/webhooks/${replyTo.application_id}/${replyTo.token}`, { content: text });
  },
};
