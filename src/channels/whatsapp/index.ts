import { verifyHubSignature, verifyMetaSubscription } from "../hub-signature.ts";
import type { Platform } from "../platform.ts";
import { parseWhatsapp } from "./parse.ts";

/** No reply target: a reply goes from the business number a message came to, not known from the channel. */
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
