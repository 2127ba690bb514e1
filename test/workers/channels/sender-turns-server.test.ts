import { describe, expect, it } from "vitest";
import { senderNotice } from "../../../src/workers/channels/pipeline.ts";
import { SENDER_WINDOW_MS } from "../../../src/workers/channels/turn-limit.ts";
import { channelsServer } from "./setup.ts";

// AGENTOS_CHANNEL_SENDER_TURNS=2 as the service reads it.
const env = channelsServer({ config: { channelSenderTurns: 2 } });

const update = (id: number, text: string) =>
  JSON.stringify({ update_id: id, message: { text, chat: { id: 77 }, from: { id: 5, is_bot: false } } });

describe("a Telegram member past AGENTOS_CHANNEL_SENDER_TURNS, on the running service", () => {
  it("gets two answers, then one notice sent without a model call, and the drops are in /metrics", async () => {
    await env.secret("channel:telegram:secret_token", "tg-secret");
    await env.secret("channel:telegram:bot_token", "123:ABC");
    await env.boundAgent("telegram", "77");
    env.fake.reply({ content: "first answer" }, { content: "second answer" });
    // The counts start again each window: the messages are not sent across a window's end.
    const left = SENDER_WINDOW_MS - (Date.now() % SENDER_WINDOW_MS);
    if (left < 30_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
    const headers = { "content-type": "application/json", "x-telegram-bot-api-secret-token": "tg-secret" };
    for (let id = 1; id <= 5; id++) {
      expect((await env.webhook("/webhook/telegram", update(id, `message ${id}`), headers)).status).toBe(200);
    }
    const sent = (await env.platformCalls(3)).map((call) => JSON.parse(call.body).text);
    expect(sent).toEqual(expect.arrayContaining(["first answer", "second answer", senderNotice(2)]));
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Two turns only, and the notice once.
    expect(env.fake.requests).toHaveLength(2);
    expect(env.platform).toHaveLength(3);
    const metrics = await (await env.server.request("/metrics")).text();
    expect(metrics).toContain('agentos_channel_messages_dropped_total{platform="telegram",over="sender"} 3');
  }, 60_000);
});
