import { postJson, type Sender } from "../sender.ts";

export const whatsapp: Sender = {
  defaultBaseUrl: "https://graph.facebook.com/v21.0",
  async send({ baseUrl, token }, replyTo, text) {
    // The business number's id is a number: nothing in a webhook may steer the token to another Graph path.
    const number = String(replyTo.phone_number_id);
    if (!/^\d{1,32}$/.test(number)) throw new Error(`Not a WhatsApp phone_number_id: ${number}`);
    await postJson(
      `${baseUrl}/${number}/messages`,
      { messaging_product: "whatsapp", to: replyTo.to, type: "text", text: { body: text } },
      { authorization: `Bearer ${token}` },
    );
  },
};
