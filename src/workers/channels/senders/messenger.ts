import { postJson, type Sender } from "../sender.ts";

export const messenger: Sender = {
  defaultBaseUrl: "https://graph.facebook.com/v21.0",
  async send({ baseUrl, token }, replyTo, text) {
    await postJson(
      `${baseUrl}/me/messages`,
      { recipient: { id: replyTo.recipient }, messaging_type: "RESPONSE", message: { text } },
      { authorization: `Bearer ${token}` },
    );
  },
};
