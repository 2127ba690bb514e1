import { verifyHubSignature, verifyMetaSubscription } from "../hub-signature.ts";
import type { Platform } from "../platform.ts";
import { parseMessenger } from "./parse.ts";

/**
 * A channel is a Facebook Page (its Page ID). Each Page has its own access token
 * (`channel:messenger:page_token:<Page ID>`; the bare `page_token` serves a service with one Page). No
 * reply target: the channel says which Page a message goes from, not to which of its customers.
 */
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
  channelToken: {
    name: (page) => `channel:messenger:page_token:${page}`,
    channelOf: (replyTo) => (typeof replyTo.page === "string" ? replyTo.page : undefined),
  },
};
