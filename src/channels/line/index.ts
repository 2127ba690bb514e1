import type { Platform } from "../platform.ts";
import { parseLine } from "./parse.ts";
import { verifyLine } from "./verify.ts";

export const line: Platform<"line"> = {
  platform: "line",
  vault: { secret: "channel:line:channel_secret", token: "channel:line:channel_token" },
  maxChunk: 5000,
  // LINE takes at most 5 messages per push; longer replies end with "…".
  maxParts: 5,
  verify: verifyLine,
  parse: parseLine,
  replyTarget: (channelId) => ({ to: channelId }),
};
