import type { Platform } from "../platform.ts";
import { parseTeams } from "./parse.ts";
import { verifyTeams } from "./verify.ts";

/**
 * Teams outgoing webhooks take the answer in the response (within 10 s). A slower turn is queued and
 * its answer posted to the channel's incoming webhook: an incoming webhook posts into the one channel it
 * was made in, so each channel has its own URL (`channel:teams:incoming_webhook_url:<conversation>`), and
 * the bare `incoming_webhook_url` serves a team with one channel, for replies only. An agent's
 * unprompted message goes only to the channel's own URL: through the bare one, any realm binding any
 * conversation id could post into the channel that URL leads to.
 */
export const teams: Platform<"teams"> = {
  platform: "teams",
  vault: { secret: "channel:teams:hmac_secret", token: "channel:teams:incoming_webhook_url" },
  maxChunk: 28_000,
  syncTimeoutMs: 9000,
  verify: verifyTeams,
  parse: parseTeams,
  respond: (text) => ({ status_code: 200, body: { type: "message", text } }),
  channelToken: {
    name: (conversation) => `channel:teams:incoming_webhook_url:${conversation}`,
    channelOf: (replyTo) => (typeof replyTo.conversation === "string" ? replyTo.conversation : undefined),
    ownForUnprompted: true,
  },
  replyTarget: (conversation) => ({ conversation }),
};
