import { type Adapter, postJson } from "../adapter.ts";
import { parseTelegram } from "./parse.ts";
import { verifyTelegram } from "./verify.ts";

export const telegram: Adapter = {
  platform: "telegram",
  secretName: "secret_token",
  tokenName: "bot_token",
  defaultBaseUrl: "https://api.telegram.org",
  maxChunk: 4096,
  verify: verifyTelegram,
  parse: parseTelegram,
  async send({ baseUrl, token }, replyTo, text) {
    await postJson(`${baseUrl}/bot${token}/sendMessage`, { ...replyTo, text });
  },
};
