import { type Adapter, postJson } from "../adapter.ts";
import { verifyHubSignature, verifyMetaSubscription } from "../hub-signature.ts";
import { parseWhatsapp } from "./parse.ts";

export const whatsapp: Adapter = {
  platform: "whatsapp",
  secretName: "app_secret",
  tokenName: "access_token",
  defaultBaseUrl: "https://graph.facebook.com/v21.0",
  maxChunk: 4096,
  verifyGet: verifyMetaSubscription,
  verify: verifyHubSignature,
  parse: parseWhatsapp,
  async send({ baseUrl, token }, replyTo, text) {
    await postJson(
      `${baseUrl}/${replyTo.phone_number_id}/messages`,
      { messaging_product: "whatsapp", to: replyTo.to, type: "text", text: { body: text } },
      { authorization: `Bearer ${token}` },
    );
  },
};
