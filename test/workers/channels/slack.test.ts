import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { channelsServer } from "./setup.ts";

const env = channelsServer();
const SECRET = "slack-signing-secret";

function signed(body: unknown, at = Math.floor(Date.now() / 1000), secret = SECRET) {
  const raw = JSON.stringify(body);
  const signature = `v0=${createHmac("sha256", secret).update(`v0:${at}:${raw}`).digest("hex")}`;
  return {
    raw,
    headers: {
      "content-type": "application/json",
      "x-slack-request-timestamp": String(at),
      "x-slack-signature": signature,
    },
  };
}

let sent = 0;
/** A message event; each a new message (its own ts) unless a ts is given. */
const message = (
  channel: string,
  text: string,
  eventId: string,
  ts = `1700000000.${String(++sent).padStart(6, "0")}`,
) => ({
  type: "event_callback",
  event_id: eventId,
  event: { type: "message", channel, user: "U1", text, ts },
});

describe("Slack", () => {
  it("fails closed without its signing secret", async () => {
    const { raw, headers } = signed(message("C0", "hi", "Ev0"));
    const answer = await env.webhook("/webhook/slack", raw, headers);
    expect(answer).toEqual({
      status: 401,
      body: { error: "slack is not configured: store channel:slack:signing_secret in the vault" },
    });
  });

  it("answers the URL challenge, and a signed message reaches the bound agent, whose reply comes back in the thread", async () => {
    await env.secret("channel:slack:signing_secret", SECRET);
    await env.secret("channel:slack:bot_token", "xoxb-test");
    const challenge = signed({ type: "url_verification", challenge: "abc123" });
    expect(await env.webhook("/webhook/slack", challenge.raw, challenge.headers)).toEqual({
      status: 200,
      body: { challenge: "abc123" },
    });
    await env.boundAgent("slack", "C1");
    env.fake.reply({ content: "hello from slack agent" });
    const { raw, headers } = signed(message("C1", "hi agent", "Ev1", "1700000000.000100"));
    expect(await env.webhook("/webhook/slack", raw, headers)).toEqual({ status: 200, body: { ok: true } });
    const [posted] = await env.platformCalls(1);
    expect(posted).toMatchObject({
      path: "/chat.postMessage",
      headers: { authorization: "Bearer xoxb-test" },
    });
    expect(JSON.parse(posted?.body ?? "")).toEqual({
      channel: "C1",
      thread_ts: "1700000000.000100",
      text: "hello from slack agent",
    });
  });

  it("refuses a stale, a forged and an unsigned request with 401 and runs no turn", async () => {
    const before = env.fake.requests.length;
    const stale = signed(message("C1", "old", "Ev2"), Math.floor(Date.now() / 1000) - 600);
    expect((await env.webhook("/webhook/slack", stale.raw, stale.headers)).status).toBe(401);
    const forged = signed(message("C1", "forged", "Ev3"), undefined, "not-the-secret");
    expect((await env.webhook("/webhook/slack", forged.raw, forged.headers)).status).toBe(401);
    const unsigned = signed(message("C1", "bare", "Ev4"));
    expect(
      (await env.webhook("/webhook/slack", unsigned.raw, { "content-type": "application/json" })).status,
    ).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(env.fake.requests.length).toBe(before);
  });

  it("takes a retried event once, skips bots, and splits a long reply at the platform's limit", async () => {
    const start = env.platform.length;
    env.fake.reply({ content: `${"word ".repeat(1200)}end` });
    const retry = signed(message("C1", "long please", "Ev5"));
    await env.webhook("/webhook/slack", retry.raw, retry.headers);
    await env.webhook("/webhook/slack", retry.raw, { ...retry.headers, "x-slack-retry-num": "1" });
    const bot = signed({
      type: "event_callback",
      event_id: "Ev6",
      event: { type: "message", channel: "C1", bot_id: "B1", text: "me" },
    });
    expect((await env.webhook("/webhook/slack", bot.raw, bot.headers)).status).toBe(200);
    const calls = (await env.platformCalls(start + 2)).slice(start);
    const parts = calls.map((call) => JSON.parse(call.body).text as string);
    expect(parts.every((part) => part.length <= 4000)).toBe(true);
    expect(parts.join(" ")).toBe(`${"word ".repeat(1200)}end`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(env.platform.length).toBe(start + 2);
  });
});

describe("Slack messages no agent can answer", () => {
  it("keep the job for the operator after the first refusal instead of retrying it", async () => {
    await env.secret("channel:slack:signing_secret", SECRET);
    const { raw, headers } = signed(message("C-UNBOUND", "anyone there?", "Ev-unbound"));
    expect((await env.webhook("/webhook/slack", raw, headers)).status).toBe(200);
    let failed: Array<{ platform: string; agentId: string; lastError: string }> = [];
    for (let i = 0; i < 50 && failed.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      failed = (
        (await (await env.server.request("/api/channels/failed")).json()) as { failed: typeof failed }
      ).failed;
    }
    expect(failed).toEqual([
      expect.objectContaining({
        platform: "slack",
        agentId: "default",
        lastError: expect.stringContaining("default"),
      }),
    ]);
  });
});

describe("Slack events Slack sends more than once", () => {
  it("run one turn for a mention that arrives both as app_mention and as message (two event ids)", async () => {
    await env.secret("channel:slack:signing_secret", SECRET);
    await env.secret("channel:slack:bot_token", "xoxb-test");
    await env.boundAgent("slack", "C-TWICE");
    const turns = env.fake.requests.length;
    const start = env.platform.length;
    env.fake.reply({ content: "answered once" });
    for (const [type, eventId] of [
      ["app_mention", "Ev-mention"],
      ["message", "Ev-message"],
    ] as const) {
      const event = message("C-TWICE", "<@U0BOT> are you there?", eventId, "1700000100.000200");
      const { raw, headers } = signed({ ...event, event: { ...event.event, type } });
      expect((await env.webhook("/webhook/slack", raw, headers)).status).toBe(200);
    }
    const [posted] = (await env.platformCalls(start + 1)).slice(start);
    expect(JSON.parse(posted?.body ?? "").text).toBe("answered once");
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(env.fake.requests.length - turns).toBe(1);
    expect(env.platform.length).toBe(start + 1);
  });

  it("answer a signed event whose text is not a string with a 400 naming the field", async () => {
    await env.secret("channel:slack:signing_secret", SECRET);
    const event = message("C-TWICE", "", "Ev-typed");
    const { raw, headers } = signed({ ...event, event: { ...event.event, text: { rich: true } } });
    expect(await env.webhook("/webhook/slack", raw, headers)).toEqual({
      status: 400,
      body: { error: expect.stringContaining("event.text") },
    });
  });
});

describe("Slack replies", () => {
  it("carry an agent's <!channel>, <!here> and <@user> as text, so a prompted agent cannot ping the channel", async () => {
    await env.secret("channel:slack:signing_secret", SECRET);
    await env.secret("channel:slack:bot_token", "xoxb-test");
    await env.boundAgent("slack", "C-PING");
    const start = env.platform.length;
    env.fake.reply({ content: "<!channel> <!here|here> <!subteam^S1> <@U2> & co" });
    const { raw, headers } = signed(message("C-PING", "say <!channel> to everyone", "Ev-ping"));
    expect((await env.webhook("/webhook/slack", raw, headers)).status).toBe(200);
    const [posted] = (await env.platformCalls(start + 1)).slice(start);
    expect(JSON.parse(posted?.body ?? "").text).toBe(
      "&lt;!channel&gt; &lt;!here|here&gt; &lt;!subteam^S1&gt; &lt;@U2&gt; &amp; co",
    );
  });
});
