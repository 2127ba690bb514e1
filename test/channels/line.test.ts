import { describe, expect, it } from "vitest";
import { line } from "../../src/channels/line/index.ts";
import { fixture } from "./fixtures.ts";

describe("LINE parse", () => {
  const { envelope } = fixture("line", "text-message");

  it("maps a user's text message to the user, with the webhook event id", () => {
    expect(line.parse(envelope).messages).toEqual([
      {
        channelId: "U4af4980629...",
        userId: "U4af4980629...",
        text: "Hello, world",
        eventId: "01FZ74A0TDDPYRVKNK77XKC3ZR",
        replyTo: { to: "U4af4980629..." },
      },
    ]);
  });

  it("answers a group's message in the group", () => {
    const body = JSON.parse(
      envelope.rawBody.replace('"type": "user"', '"type": "group", "groupId": "Ca56f94637c"'),
    );
    expect(line.parse({ ...envelope, body }).messages[0]).toMatchObject({
      channelId: "Ca56f94637c",
      userId: "U4af4980629...",
      replyTo: { to: "Ca56f94637c" },
    });
  });
});
