import { verifyHubSignature, verifyMetaSubscription } from "../hub-signature.ts";
import type { Platform } from "../platform.ts";
import { parseMessenger } from "./parse.ts";

export const messenger: Platform<"messenger"> = {
  platform: "messenger",
  vault: {
    secret: "channel:messenger:app_secret",
    token: "channel:messenger:page_token",
    verifyToken: "channel:messenger:verify_token",
  },
  maxChunk: 2000,
  verifyGet: verifyMetaSubscription,
  verify: verifyHubSignature,
  parse: parseMessenger,
  replyTarget: (channelId) => ({ recipient: channelId }),
};
