import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { call, createAgent, newRealm } from "../../helpers/control-plane.ts";
import { channelsServer } from "./setup.ts";

const env = channelsServer();

function slackSigned(body: unknown, secret: string) {
  const raw = JSON.stringify(body);
  const at = Math.floor(Date.now() / 1000);
  return {
    raw,
    headers: {
      "content-type": "application/json",
      "x-slack-request-timestamp": String(at),
      "x-slack-signature": `v0=${createHmac("sha256", secret).update(`v0:${at}:${raw}`).digest("hex")}`,
    },
  };
}

describe("a binding written directly to state scope channel_agents as {agentId}", () => {
  it("reaches the agent, in the agent's realm, from a signed generic webhook and a signed Slack event", async () => {
    const realmId = await newRealm(env.server);
    const agentId = await createAgent(env.server, realmId, { name: "state-bound agent" });
    const set = (key: string) =>
      env.server.service.engine.trigger({
        function_id: "state::set",
        payload: { scope: "channel_agents", key, value: { agentId } },
      });
    await set("webhook:direct");
    await set("slack:C-DIRECT");
    await env.secret("channel:direct:secret", "direct-secret");
    await env.secret("channel:slack:signing_secret", "direct-slack-secret");
    await env.secret("channel:slack:bot_token", "xoxb-direct");

    env.fake.reply({ content: "generic answer" });
    const body = JSON.stringify({ text: "hello" });
    const generic = await env.webhook("/webhook/direct", body, {
      "content-type": "application/json",
      "x-signature-256": `sha256=${createHmac("sha256", "direct-secret").update(body).digest("hex")}`,
    });
    expect(generic).toEqual({ status: 200, body: { response: "generic answer" } });

    const start = env.platform.length;
    env.fake.reply({ content: "slack answer" });
    const { raw, headers } = slackSigned(
      {
        type: "event_callback",
        event_id: "Ev-direct",
        event: { type: "message", channel: "C-DIRECT", user: "U1", text: "hi", ts: "1.2" },
      },
      "direct-slack-secret",
    );
    expect(await env.webhook("/webhook/slack", raw, headers)).toEqual({ status: 200, body: { ok: true } });
    const posted = (await env.platformCalls(start + 1))[start];
    expect(JSON.parse(posted?.body ?? "")).toMatchObject({ channel: "C-DIRECT", text: "slack answer" });

    const sessions = await call(env.server, "GET", `/api/agents/${agentId}/sessions`);
    expect(JSON.stringify(sessions.body)).toContain("webhook:direct");
    expect(JSON.stringify(sessions.body)).toContain("slack:C-DIRECT");
  });

  it("is listed by GET /api/channels with its platform, channel and the agent's realm", async () => {
    const realmId = await newRealm(env.server);
    const agentId = await createAgent(env.server, realmId, { name: "listed agent" });
    await env.server.service.engine.trigger({
      function_id: "state::set",
      payload: { scope: "channel_agents", key: "telegram:-1009", value: { agentId } },
    });
    const { status, body } = await call(env.server, "GET", `/api/channels?realmId=${realmId}`);
    expect(status).toBe(200);
    expect(body).toEqual([
      expect.objectContaining({ platform: "telegram", channelId: "-1009", agentId, realmId }),
    ]);
  });
});
