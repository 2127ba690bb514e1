import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { teams } from "../../src/channels/teams/index.ts";
import { fixture } from "./fixtures.ts";

describe("Teams", () => {
  it("maps an outgoing-webhook activity to its channel (not its thread), without the @mention", () => {
    expect(teams.parse(fixture("teams", "outgoing-webhook").envelope).messages).toEqual([
      {
        channelId: "19:253b1f341670408fb6fe51050b6e5ceb@thread.skype",
        userId: "29:1XJKJMvc5GBtc2JwZq0oj8tHZmzrQgFmB39ATiQWA85gQtHieVkKilBZ9XHoq9j7Zaqt7CZ-NJWi7me2kHTL3Bw",
        text: "Hi",
        eventId: "1485983408511",
        replyTo: { conversation: "19:253b1f341670408fb6fe51050b6e5ceb@thread.skype" },
      },
    ]);
  });

  it("answers in the webhook's own response, as a message activity", () => {
    expect(teams.respond?.("hello")).toEqual({ status_code: 200, body: { type: "message", text: "hello" } });
  });

  it("refuses every request while its secret is not the base64 token Teams gave (an empty key signs for anyone)", () => {
    const { envelope } = fixture("teams", "outgoing-webhook");
    const anyone = `HMAC ${createHmac("sha256", Buffer.alloc(0)).update(envelope.rawBody).digest("base64")}`;
    const signed = { ...envelope, headers: { ...envelope.headers, authorization: anyone } };
    expect(teams.verify(signed, "¡¿!?", 0, {})).toMatch(/channel:teams:hmac_secret must be/);
  });
});
