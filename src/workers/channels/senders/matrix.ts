import { randomUUID } from "node:crypto";
import type { Adapter } from "../adapter.ts";
import { OWN_MARK, parseMatrix } from "./parse.ts";
import { verifyMatrix } from "./verify.ts";

export const matrix: Adapter = {
  platform: "matrix",
  secretName: "hs_token",
  tokenName: "as_token",
  // The homeserver's client API: MATRIX_API_BASE_URL (e.g. https://matrix.example.org).
  defaultBaseUrl: "http://localhost:8008",
  maxChunk: 16_000,
  // The homeserver PUTs transactions to <AS url>/_matrix/app/v1/transactions/<txnId>.
  routes: [{ method: "PUT", path: "/webhook/matrix/_matrix/app/v1/transactions/:txnId" }],
  verify: verifyMatrix,
  parse: parseMatrix,
  async send({ baseUrl, token }, replyTo, text) {
    const room = encodeURIComponent(String(replyTo.room));
    const response = await fetch(
      `${baseUrl}/_matrix/client/v3/rooms/${room}/send/m.room.message/${randomUUID()}`,
      {
        method: "PUT",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ msgtype: "m.text", body: text, [OWN_MARK]: true }),
        signal: AbortSignal.timeout(30_000),
      },
    );
    if (!response.ok)
      throw new Error(`Matrix answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  },
};
