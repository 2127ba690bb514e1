import { type Adapter, postJson } from "../adapter.ts";
import { parseTeams } from "./parse.ts";
import { verifyTeams } from "./verify.ts";

/**
 * Teams outgoing webhooks take the answer in the response (within 10 s). A slower turn is queued and
 * its answer posted to the channel's incoming webhook (vault `channel:teams:incoming_webhook_url`).
 */
export const teams: Adapter = {
  platform: "teams",
  secretName: "hmac_secret",
  tokenName: "incoming_webhook_url",
  defaultBaseUrl: "",
  maxChunk: 28_000,
  syncTimeoutMs: 9000,
  verify: verifyTeams,
  parse: parseTeams,
  respond: (text) => ({ status_code: 200, body: { type: "message", text } }),
  async send({ token }, _replyTo, text) {
    await postJson(String(token), { text });
  },
};
