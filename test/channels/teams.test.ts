import { describe, expect, it } from "vitest";
import { teams } from "../../src/channels/teams/index.ts";
import { fixture } from "./fixtures.ts";

describe("Teams", () => {
  it("maps an outgoing-webhook activity to its conversation, without the @mention", () => {
    expect(teams.parse(fixture("teams", "outgoing-webhook").envelope).messages).toEqual([
      {
        channelId: "19:253b1f341670408fb6fe51050b6e5ceb@thread.skype;messageid=1485983408511",
        userId: "29:1XJKJMvc5GBtc2JwZq0oj8tHZmzrQgFmB39ATiQWA85gQtHieVkKilBZ9XHoq9j7Zaqt7CZ-NJWi7me2kHTL3Bw",
        text: "Hi",
        eventId: "1485983408511",
        replyTo: {},
      },
    ]);
  });

  it("answers in the webhook's own response, as a message activity", () => {
    expect(teams.respond?.("hello")).toEqual({ status_code: 200, body: { type: "message", text: "hello" } });
  });
});
