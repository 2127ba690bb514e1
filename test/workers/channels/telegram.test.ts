import { describe, expect, it } from "vitest";
import { channelsServer } from "./setup.ts";

const env = channelsServer();

const update = (id: number, chat: number, text: string) =>
  JSON.stringify({ update_id: id, message: { text, chat: { id: chat }, from: { id: 7, is_bot: false } } });

describe("Telegram", () => {
  it("takes a message with the right secret token, replies through sendMessage, and refuses a wrong or missing token", async () => {
    await env.secret("channel:telegram:secret_token", "tg-secret");
    await env.secret("channel:telegram:bot_token", "123:ABC");
    await env.boundAgent("telegram", "42");
    env.fake.reply({ content: "telegram reply" });
    const headers = { "content-type": "application/json", "x-telegram-bot-api-secret-token": "tg-secret" };
    expect(await env.webhook("/webhook/telegram", update(1, 42, "hello"), headers)).toEqual({
      status: 200,
      body: { ok: true },
    });
    const [sent] = await env.platformCalls(1);
    expect(sent?.path).toBe("/bot123:ABC/sendMessage");
    expect(JSON.parse(sent?.body ?? "")).toEqual({ chat_id: "42", text: "telegram reply" });
    const before = env.fake.requests.length;
    expect(
      (
        await env.webhook("/webhook/telegram", update(2, 42, "x"), {
          ...headers,
          "x-telegram-bot-api-secret-token": "nope",
        })
      ).status,
    ).toBe(401);
    expect(
      (await env.webhook("/webhook/telegram", update(3, 42, "x"), { "content-type": "application/json" }))
        .status,
    ).toBe(401);
    // The same update delivered twice runs once.
    await env.webhook("/webhook/telegram", update(1, 42, "hello"), headers);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(env.fake.requests.length).toBe(before);
  });
});

describe("Telegram input that is not an event", () => {
  it("refuses a signed body that is not JSON with 400 and runs no turn", async () => {
    await env.secret("channel:telegram:secret_token", "tg-secret");
    const before = env.fake.requests.length;
    const answer = await env.webhook("/webhook/telegram", "not json at all", {
      "content-type": "text/plain",
      "x-telegram-bot-api-secret-token": "tg-secret",
    });
    expect(answer.status).toBe(400);
    expect(env.fake.requests.length).toBe(before);
  });
});
