import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createCapturingLogger } from "../../helpers/engine.ts";
import { channelsServer } from "./setup.ts";

const { logger, entries } = createCapturingLogger();
const env = channelsServer({ logger });
const SECRET = "slack-signing-secret";

function signed(body: unknown) {
  const raw = JSON.stringify(body);
  const at = Math.floor(Date.now() / 1000);
  return {
    raw,
    headers: {
      "content-type": "application/json",
      "x-slack-request-timestamp": String(at),
      "x-slack-signature": `v0=${createHmac("sha256", SECRET).update(`v0:${at}:${raw}`).digest("hex")}`,
    },
  };
}

const counted = async (metric: string, platform: string) => {
  const text = await (await env.server.request("/metrics")).text();
  const line = text.split("\n").find((entry) => entry.startsWith(`${metric}{platform="${platform}"}`));
  return line ? Number(line.split(" ").at(-1)) : 0;
};
const failures = (platform: string) => counted("agentos_channel_delivery_failures_total", platform);

describe("a Slack reply that cannot be delivered (no bot token in the vault)", () => {
  it("is logged at warn with the reason at its first failed delivery, and counted in /metrics by platform", async () => {
    await env.secret("channel:slack:signing_secret", SECRET);
    await env.boundAgent("slack", "C-NO-BOT");
    env.fake.reply({ content: "an answer nobody will see" });
    const { raw, headers } = signed({
      type: "event_callback",
      event_id: "Ev-no-bot",
      event: { type: "message", channel: "C-NO-BOT", user: "U1", text: "hi", ts: "1.1" },
    });
    expect((await env.webhook("/webhook/slack", raw, headers)).status).toBe(200);
    for (let i = 0; i < 50 && (await failures("slack")) === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await failures("slack")).toBeGreaterThanOrEqual(1);
    const warned = entries.filter(
      (entry) => entry.msg === "channel reply not delivered" && entry.level === 40,
    );
    expect(warned).toEqual([
      expect.objectContaining({
        platform: "slack",
        attempt: 1,
        reason: "store channel:slack:bot_token in the vault to reply on slack",
      }),
    ]);
  });
});

describe("a Slack message whose agent turn fails (the provider answers 500)", () => {
  it("is logged at warn with the reason at its first failed attempt, and counted in /metrics by platform", async () => {
    await env.secret("channel:slack:signing_secret", SECRET);
    await env.boundAgent("slack", "C-TURN-FAILS");
    env.fake.reply(...Array.from({ length: 6 }, () => ({ status: 500 })));
    const { raw, headers } = signed({
      type: "event_callback",
      event_id: "Ev-turn-fails",
      event: { type: "message", channel: "C-TURN-FAILS", user: "U1", text: "hi", ts: "2.1" },
    });
    expect((await env.webhook("/webhook/slack", raw, headers)).status).toBe(200);
    const turnFailures = () => counted("agentos_channel_turn_failures_total", "slack");
    for (let i = 0; i < 100 && (await turnFailures()) === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await turnFailures()).toBeGreaterThanOrEqual(1);
    expect(entries).toContainEqual(
      expect.objectContaining({
        msg: "channel message's agent turn failed",
        level: 40,
        platform: "slack",
        attempt: 1,
      }),
    );
  });
});
