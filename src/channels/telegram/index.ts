import type { Platform } from "../platform.ts";
import { parseTelegram } from "./parse.ts";
import { verifyTelegram } from "./verify.ts";

export const telegram: Platform<"telegram"> = {
  platform: "telegram",
  vault: { secret: "channel:telegram:secret_token", token: "channel:telegram:bot_token" },
  maxChunk: 4096,
  verify: verifyTelegram,
  parse: parseTelegram,
  replyTarget: (channelId) => ({ chat_id: channelId }),
};
