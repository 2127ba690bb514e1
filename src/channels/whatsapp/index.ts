import { verifyHubSignature, verifyMetaSubscription } from "../hub-signature.ts";
import type { Platform } from "../platform.ts";
import { parseWhatsapp } from "./parse.ts";

/**
 * A channel is a business number (its phone_number_id). No reply target: the channel says which number
 * a message goes from, not which customer it goes to, and WhatsApp lets a business start a conversation
 * only with a template message.
 */
export const whatsapp: Platform<"whatsapp"> = {
  platform: "whatsapp",
  vault: {
    secret: "channel:whatsapp:app_secret",
    token: "channel:whatsapp:access_token",
    verifyToken: "channel:whatsapp:verify_token",
  },
  maxChunk: 4096,
  verifyGet: verifyMetaSubscription,
  verify: verifyHubSignature,
  parse: parseWhatsapp,
};
