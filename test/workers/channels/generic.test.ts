import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { call, realmKey } from "../../helpers/control-plane.ts";
import { channelsServer } from "./setup.ts";

const env = channelsServer();
const sign = (secret: string, body: string) =>
  `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

describe("the generic webhook POST /webhook/:channelId", () => {
  it("answers a signed message with the bound agent's reply, in session webhook:<channelId>", async () => {
    const { agentId } = await env.boundAgent("webhook", "support");
    await env.secret("channel:support:secret", "s3cret");
    env.fake.reply({ content: "hello from the agent" });
    const body = JSON.stringify({ text: "hi there" });
    const answer = await env.webhook("/webhook/support", body, {
      "content-type": "application/json",
      "x-signature-256": sign("s3cret", body),
    });
    expect(answer).toEqual({ status: 200, body: { response: "hello from the agent" } });
    const sessions = await call(env.server, "GET", `/api/agents/${agentId}/sessions`);
    expect(JSON.stringify(sessions.body)).toContain("webhook:support");
  });

  it("takes a timestamped signature once, and refuses it replayed, stale or over other bytes", async () => {
    await env.boundAgent("webhook", "stamped");
    await env.secret("channel:stamped:secret", "s3cret");
    env.fake.reply({ content: "once" });
    const body = JSON.stringify({ text: "pay the invoice" });
    const now = Math.floor(Date.now() / 1000);
    const stamped = (at: number, signed = body) => ({
      "content-type": "application/json",
      "x-signature-timestamp": String(at),
      "x-signature-256": sign("s3cret", `${at}.${signed}`),
    });
    const first = await env.webhook("/webhook/stamped", body, stamped(now));
    expect(first).toEqual({ status: 200, body: { response: "once" } });
    const before = env.fake.requests.length;
    const replayed = await env.webhook("/webhook/stamped", body, stamped(now));
    expect(replayed.status).toBe(401);
    expect(JSON.stringify(replayed.body)).toContain("already received");
    const stale = await env.webhook("/webhook/stamped", body, stamped(now - 600));
    expect(JSON.stringify(stale.body)).toContain("more than 300 s from now");
    // The body-only signature does not verify a timestamped request, nor one timestamp another.
    const moved = { ...stamped(now + 1), "x-signature-256": sign("s3cret", body) };
    expect((await env.webhook("/webhook/stamped", body, moved)).status).toBe(401);
    const other = { ...stamped(now), "x-signature-timestamp": String(now + 1) };
    expect((await env.webhook("/webhook/stamped", body, other)).status).toBe(401);
    expect(env.fake.requests.length).toBe(before);
  });

  it("refuses a bad or missing signature, and a channel without a secret, with 401 and no turn", async () => {
    await env.boundAgent("webhook", "locked");
    await env.secret("channel:locked:secret", "right");
    const before = env.fake.requests.length;
    const body = JSON.stringify({ text: "forged" });
    expect(
      (
        await env.webhook("/webhook/locked", body, {
          "content-type": "application/json",
          "x-signature-256": sign("wrong", body),
        })
      ).status,
    ).toBe(401);
    expect((await env.webhook("/webhook/locked", body, { "content-type": "application/json" })).status).toBe(
      401,
    );
    expect(
      (
        await env.webhook("/webhook/open", body, {
          "content-type": "application/json",
          "x-signature-256": sign("x", body),
        })
      ).status,
    ).toBe(401);
    // A signature over other bytes than those sent does not count.
    expect(
      (
        await env.webhook("/webhook/locked", `${body} `, {
          "content-type": "application/json",
          "x-signature-256": sign("right", body),
        })
      ).status,
    ).toBe(401);
    expect(env.fake.requests.length).toBe(before);
  });

  it("accepts an API key instead, takes the channel from the query, and refuses an invalid key", async () => {
    const { realmId } = await env.boundAgent("webhook", "by-key");
    const key = await realmKey(env.server, realmId);
    env.fake.reply({ content: "keyed" });
    const body = JSON.stringify({ message: "hello" });
    const answer = await env.webhook("/webhook/by-key", body, {
      "content-type": "application/json",
      authorization: `Bearer ${key}`,
    });
    expect(answer).toEqual({ status: 200, body: { response: "keyed" } });
    expect(
      (
        await env.webhook("/webhook/by-key", body, {
          "content-type": "application/json",
          authorization: "Bearer nope",
        })
      ).status,
    ).toBe(401);
  });

  it("posts the reply to callback_url, and uses the placeholder for a payload without text", async () => {
    const { realmId } = await env.boundAgent("webhook", "cb");
    const key = await realmKey(env.server, realmId);
    env.fake.reply({ content: "called back" });
    const body = JSON.stringify({ something: "else", callback_url: `${env.platformUrl}/callback` });
    const answer = await env.webhook("/webhook/cb", body, {
      "content-type": "application/json",
      authorization: `Bearer ${key}`,
    });
    expect(answer.body).toEqual({ response: "called back" });
    const [callback] = await env.platformCalls(1);
    expect(callback).toMatchObject({ path: "/callback", body: JSON.stringify({ text: "called back" }) });
    expect(JSON.stringify(env.fake.requests.at(-1))).toContain("[Unrecognized webhook payload]");
  });

  it("binds channels only to agents of the caller's realm, and lists only the caller's bindings", async () => {
    const { realmId, agentId } = await env.boundAgent("slack", "C-BIND");
    const other = await env.boundAgent("slack", "C-OTHER");
    const key = await realmKey(env.server, realmId);
    expect(
      (
        await call(
          env.server,
          "POST",
          "/api/channels",
          { platform: "slack", channelId: "C-X", agentId: other.agentId },
          key,
        )
      ).status,
    ).toBe(404);
    const listed = await call(env.server, "GET", "/api/channels", undefined, key);
    expect(listed.body).toEqual([
      expect.objectContaining({ platform: "slack", channelId: "C-BIND", agentId }),
    ]);
    expect((await call(env.server, "DELETE", "/api/channels/slack/C-OTHER", undefined, key)).status).toBe(
      404,
    );
    expect((await call(env.server, "DELETE", "/api/channels/slack/C-BIND", undefined, key)).status).toBe(204);
  });

  it("tells another realm's key neither the agent nor anything else of a channel bound elsewhere", async () => {
    const taken = await env.boundAgent("webhook", "taken-elsewhere");
    const mine = await env.boundAgent("slack", "C-MINE");
    const key = await realmKey(env.server, mine.realmId);
    const rebind = await call(
      env.server,
      "POST",
      "/api/channels",
      { platform: "webhook", channelId: "taken-elsewhere", agentId: mine.agentId },
      key,
    );
    expect(rebind.status).toBe(409);
    expect(JSON.stringify(rebind.body)).not.toContain(taken.agentId);
    expect(JSON.stringify(rebind.body)).not.toContain(taken.realmId);
    // Posting to it with the key reads as posting to an unbound channel: the same answer, no agent id.
    const body = JSON.stringify({ text: "who is there?" });
    const headers = { "content-type": "application/json", authorization: `Bearer ${key}` };
    const bound = await env.webhook("/webhook/taken-elsewhere", body, headers);
    const unbound = await env.webhook("/webhook/nobody-here", body, headers);
    expect(bound.status).toBe(404);
    expect(JSON.stringify(bound.body)).not.toContain(taken.agentId);
    expect(bound).toEqual(unbound);
  });
});
