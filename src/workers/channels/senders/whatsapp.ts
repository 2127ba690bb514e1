import { postJson, type Sender } from "../sender.ts";

export const whatsapp: Sender = {
  defaultBaseUrl: "https://graph.facebook.com/v21.0",
  async send({ baseUrl, token }, replyTo, text) {
    await postJson(
      `${baseUrl}/${replyTo.phone_number_id}/messages`,
      { messaging_product: "whatsapp", to: replyTo.to, type: "text", text: { body: text } },
      { authorization: `Bearer ${token}` },
    );
  },
};
