import { type Adapter, postJson } from "../adapter.ts";
import { verifyHubSignature, verifyMetaSubscription } from "../hub-signature.ts";
import { parseMessenger } from "./parse.ts";

export const messenger: Adapter = {
  platform: "messenger",
  secretName: "app_secret",
  tokenName: "page_token",
  defaultBaseUrl: "https://graph.facebook.com/v21.0",
  maxChunk: 2000,
  verifyGet: verifyMetaSubscription,
  verify: verifyHubSignature,
  parse: parseMessenger,
  async send({ baseUrl, token }, replyTo, text) {
    await postJson(
      `${baseUrl}/me/messages`,
      { recipient: { id: replyTo.recipient }, messaging_type: "RESPONSE", message: { text } },
      { authorization: `Bearer ${token}` },
    );
  },
};
