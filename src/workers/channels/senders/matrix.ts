import { randomUUID } from "node:crypto";
import { OWN_MARK } from "../../../channels/matrix/parse.ts";
import type { Sender } from "../sender.ts";

export const matrix: Sender = {
  // The homeserver's client API: MATRIX_API_BASE_URL (e.g. https://matrix.example.org).
  defaultBaseUrl: "http://localhost:8008",
  async send({ baseUrl, token }, replyTo, text) {
    const room = encodeURIComponent(String(replyTo.room));
    const response = await fetch(
      `${baseUrl}/_matrix/client/v3/rooms/${room}/send/m.room.message/${randomUUID()}`,
      {
        method: "PUT",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        // m.notice: the msgtype of bots, which other bots must not answer (no loop between them). An
        // empty m.mentions: "@room" or a name in an agent's text notifies no one (Matrix 1.7).
        body: JSON.stringify({ msgtype: "m.notice", body: text, [OWN_MARK]: true, "m.mentions": {} }),
        signal: AbortSignal.timeout(30_000),
      },
    );
    if (!response.ok)
      throw new Error(`Matrix answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  },
};
