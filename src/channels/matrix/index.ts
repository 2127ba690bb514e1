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
  // Matrix does not say which senders are bots, and a bot that answers m.text (as this service does)
  // would answer another such bot forever: a room gets at most 30 turns in 10 minutes. Loops faster than
  // one exchange in 20 s stop within the window; people rarely write that much to a bot in one room.
  // Any member can write to the room, so one member gets at most a third of its turns: the others
  // still have 20 (a member with more accounts has more shares; the room's moderators can remove them).
  turnLimit: { turns: 30, windowMs: 10 * 60_000, perSender: 10 },
  replyTarget: (channelId) => ({ room: channelId }),
};
