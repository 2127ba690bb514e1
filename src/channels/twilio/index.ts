import type { Platform } from "../platform.ts";
import { parseTwilio } from "./parse.ts";
import { verifyTwilio } from "./verify.ts";

/**
 * The auth token both proves Twilio's requests and sends replies. A channel is a Twilio number (the
 * `To` of the messages it receives). No reply target: the channel says which number a message goes
 * from, not to whom, nor under which account.
 */
export const twilio: Platform<"twilio"> = {
  platform: "twilio",
  vault: { secret: "channel:twilio:auth_token", token: "channel:twilio:auth_token" },
  maxChunk: 1600,
  verify: (envelope, secret, _now, env) => verifyTwilio(envelope, secret, env.AGENTOS_PUBLIC_URL),
  parse: parseTwilio,
};
