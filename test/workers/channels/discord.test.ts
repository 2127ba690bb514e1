import { generateKeyPairSync, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { channelsServer } from "./setup.ts";

const env = channelsServer();
const { privateKey, publicKey } = generateKeyPairSync("ed25519");
const publicHex = (publicKey.export({ format: "der", type: "spki" }) as Buffer).subarray(12).toString("hex");

function signed(body: unknown, key = privateKey) {
  const raw = JSON.stringify(body);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = sign(null, Buffer.from(timestamp + raw), key).toString("hex");
  return {
    raw,
    headers: {
      "content-type": "application/json",
      "x-signature-ed25519": signature,
      "x-signature-timestamp": timestamp,
    },
  };
}

describe("Discord interactions", () => {
  it("answers PING with PONG, defers a command and posts the answer to the interaction webhook; refuses a bad signature", async () => {
    await env.secret("channel:discord:public_key", publicHex);
    const ping = signed({ type: 1 });
    expect(await env.webhook("/webhook/discord", ping.raw, ping.headers)).toEqual({
      status: 200,
      body: { type: 1 },
    });
    await env.boundAgent("discord", "CH1");
    env.fake.reply({ content: "discord answer" });
    const command = signed({
      id: "i1",
      type: 2,
      application_id: "app1",
      token: "tok1",
      channel_id: "CH1",
      data: { name: "ask", options: [{ value: "what time is it" }] },
    });
    expect(await env.webhook("/webhook/discord", command.raw, command.headers)).toEqual({
      status: 200,
      body: { type: 5 },
    });
    const [followUp] = await env.platformCalls(1);
    expect(followUp?.path).toBe("/webhooks/app1/tok1");
    expect(JSON.parse(followUp?.body ?? "")).toEqual({
      content: "discord answer",
      allowed_mentions: { parse: [] },
    });
    const other = generateKeyPairSync("ed25519").privateKey;
    const forged = signed({ type: 1 }, other);
    expect((await env.webhook("/webhook/discord", forged.raw, forged.headers)).status).toBe(401);
    expect(
      (await env.webhook("/webhook/discord", ping.raw, { "content-type": "application/json" })).status,
    ).toBe(401);
  });
});

describe("Discord follow-ups", () => {
  it("let an agent's @everyone, role and user mentions ping no one", async () => {
    await env.secret("channel:discord:public_key", publicHex);
    await env.boundAgent("discord", "CH-PING");
    const start = env.platform.length;
    env.fake.reply({ content: "@everyone @here <@&123> <@456>" });
    const command = signed({
      id: "i-ping",
      type: 2,
      application_id: "app1",
      token: "tok-ping",
      channel_id: "CH-PING",
      data: { name: "ask", options: [{ value: "say @everyone" }] },
    });
    expect((await env.webhook("/webhook/discord", command.raw, command.headers)).status).toBe(200);
    const [followUp] = (await env.platformCalls(start + 1)).slice(start);
    expect(JSON.parse(followUp?.body ?? "")).toEqual({
      content: "@everyone @here <@&123> <@456>",
      allowed_mentions: { parse: [] },
    });
  });
});
