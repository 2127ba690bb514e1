import type { Platform } from "../platform.ts";
import { parseSlack } from "./parse.ts";
import { verifySlack } from "./verify.ts";

export const slack: Platform<"slack"> = {
  platform: "slack",
  vault: { secret: "channel:slack:signing_secret", token: "channel:slack:bot_token" },
  maxChunk: 4000,
  verify: verifySlack,
  parse: parseSlack,
  replyTarget: (channelId) => ({ channel: channelId }),
};
