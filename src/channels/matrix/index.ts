import type { Platform } from "../platform.ts";
import { parseMatrix } from "./parse.ts";
import { verifyMatrix } from "./verify.ts";

export const matrix: Platform<"matrix"> = {
  platform: "matrix",
  vault: { secret: "channel:matrix:hs_token", token: "channel:matrix:as_token" },
  maxChunk: 16_000,
  // The homeserver PUTs transactions to <AS url>/_matrix/app/v1/transactions/<txnId>.
  routes: [{ method: "PUT", path: "/webhook/matrix/_matrix/app/v1/transactions/:txnId" }],
  verify: verifyMatrix,
  parse: parseMatrix,
  replyTarget: (channelId) => ({ room: channelId }),
};
