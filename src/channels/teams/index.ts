import type { Platform } from "../platform.ts";
import { parseTeams } from "./parse.ts";
import { verifyTeams } from "./verify.ts";

/**
 * Teams outgoing webhooks take the answer in the response (within 10 s). A slower turn is queued and
 * its answer posted to the channel's incoming webhook (the `token` vault entry is that URL), which is
 * also where an agent's unprompted message goes: the reply target needs nothing more.
 */
export const teams: Platform<"teams"> = {
  platform: "teams",
  vault: { secret: "channel:teams:hmac_secret", token: "channel:teams:incoming_webhook_url" },
  maxChunk: 28_000,
  syncTimeoutMs: 9000,
  verify: verifyTeams,
  parse: parseTeams,
  respond: (text) => ({ status_code: 200, body: { type: "message", text } }),
  replyTarget: () => ({}),
};
