import { type Adapter, postJson } from "../adapter.ts";
import { parseLine } from "./parse.ts";
import { verifyLine } from "./verify.ts";

export const line: Adapter = {
  platform: "line",
  secretName: "channel_secret",
  tokenName: "channel_token",
  defaultBaseUrl: "https://api.line.me",
  maxChunk: 5000,
  // LINE takes at most 5 messages per push; longer replies end with "…".
  maxParts: 5,
  verify: verifyLine,
  parse: parseLine,
  async send({ baseUrl, token }, replyTo, text) {
    // Push, not reply: a reply token lapses within a minute, and the queue may deliver later.
    await postJson(
      `${baseUrl}/v2/bot/message/push`,
      { to: replyTo.to, messages: [{ type: "text", text }] },
      { authorization: `Bearer ${token}` },
    );
  },
};
