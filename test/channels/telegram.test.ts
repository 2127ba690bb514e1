import { describe, expect, it } from "vitest";
import { telegram } from "../../src/channels/telegram/index.ts";
import { fixture } from "./fixtures.ts";

describe("Telegram parse", () => {
  const { envelope } = fixture("telegram", "text-message");

  it("maps a text message to its chat, with the update id", () => {
    expect(telegram.parse(envelope).messages).toEqual([
      {
        channelId: "1111111",
        userId: "1111111",
        text: "/start",
        eventId: "10000",
        replyTo: { chat_id: "1111111" },
      },
    ]);
  });

  it("skips a bot's message", () => {
    const update = envelope.body as { message: { from: Record<string, unknown> } };
    const fromBot = {
      ...update,
      message: { ...update.message, from: { ...update.message.from, is_bot: true } },
    };
    expect(telegram.parse({ ...envelope, body: fromBot }).messages).toEqual([]);
  });
});
