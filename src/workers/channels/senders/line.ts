import { postJson, type Sender } from "../sender.ts";

export const line: Sender = {
  defaultBaseUrl: "https://api.line.me",
  async send({ baseUrl, token }, replyTo, text) {
    // Push, not reply: a reply token lapses within a minute, and the queue may deliver later.
    await postJson(
      `${baseUrl}/v2/bot/message/push`,
      { to: replyTo.to, messages: [{ type: "text", text }] },
      { authorization: `Bearer ${token}` },
    );
  },
};
