import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { channelsServer } from "./setup.ts";

const env = channelsServer();
const signature = (raw: string, secret = "line-secret") =>
  createHmac("sha256", secret).update(raw).digest("base64");

describe("LINE", () => {
  it("takes a signed text event, pushes the answer in at most 5 parts, and refuses a bad signature", async () => {
    await env.secret("channel:line:channel_secret", "line-secret");
    await env.secret("channel:line:channel_token", "line-token");
    await env.boundAgent("line", "U123");
    env.fake.reply({ content: "x".repeat(5000 * 7) });
    const raw = JSON.stringify({
      events: [
        {
          type: "message",
          webhookEventId: "ev1",
          message: { type: "text", id: "1", text: "hello" },
          source: { type: "user", userId: "U123" },
        },
      ],
    });
    expect(
      (
        await env.webhook("/webhook/line", raw, {
          "content-type": "application/json",
          "x-line-signature": signature(raw),
        })
      ).status,
    ).toBe(200);
    const pushes = await env.platformCalls(5);
    expect(pushes.every((push) => push.path === "/v2/bot/message/push")).toBe(true);
    expect(
      pushes
        .map((push) => JSON.parse(push.body).messages[0].text.length)
        .every((length: number) => length <= 5000),
    ).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(env.platform.length).toBe(5);
    expect(
      (
        await env.webhook("/webhook/line", raw, {
          "content-type": "application/json",
          "x-line-signature": signature(raw, "nope"),
        })
      ).status,
    ).toBe(401);
  });
});
