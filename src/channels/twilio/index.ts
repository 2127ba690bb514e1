import type { Platform } from "../platform.ts";
import { parseTwilio } from "./parse.ts";
import { verifyTwilio } from "./verify.ts";

/**
 * The auth token both proves Twilio's requests and sends replies. No reply target: a reply goes from
 * the number a message came to, which the channel id (the sender's number) does not say.
 */
export const twilio: Platform<"twilio"> = {
  platform: "twilio",
  vault: { secret: "channel:twilio:auth_token", token: "channel:twilio:auth_token" },
  maxChunk: 1600,
  verify: (envelope, secret, _now, env) => verifyTwilio(envelope, secret, env.AGENTOS_PUBLIC_URL),
  parse: parseTwilio,
};
