import type { Platform } from "../platform.ts";
import { parseDiscord } from "./parse.ts";
import { verifyDiscord } from "./verify.ts";

/** No reply target: a bot answers an interaction through its token, and cannot start a conversation. */
export const discord: Platform<"discord"> = {
  platform: "discord",
  vault: { secret: "channel:discord:public_key" },
  maxChunk: 2000,
  verify: verifyDiscord,
  parse: parseDiscord,
};
