import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { call, createAgent, newRealm } from "../../helpers/control-plane.ts";
import { channelsServer } from "./setup.ts";

const env = channelsServer();
const SECRET = Buffer.from("teams-shared-secret").toString("base64");
const auth = (raw: string, secret = SECRET) =>
  `HMAC ${createHmac("sha256", Buffer.from(secret, "base64")).update(raw).digest("base64")}`;

describe("Teams outgoing webhooks", () => {
  it("answers in the response, with the mention removed from the text; refuses a bad HMAC", async () => {
    await env.secret("channel:teams:hmac_secret", SECRET);
    await env.boundAgent("teams", "19:conv");
    env.fake.reply({ content: "teams answer" });
    const raw = JSON.stringify({
      type: "message",
      id: "a1",
      text: "<at>AgentOS</at> status please",
      conversation: { id: "19:conv" },
      from: { id: "u1" },
    });
    const answer = await env.webhook("/webhook/teams", raw, {
      "content-type": "application/json",
      authorization: auth(raw),
    });
    expect(answer).toEqual({ status: 200, body: { type: "message", text: "teams answer" } });
    expect(JSON.stringify(env.fake.requests.at(-1))).toContain("status please");
    expect(
      (
        await env.webhook("/webhook/teams", raw, {
          "content-type": "application/json",
          authorization: auth(raw, Buffer.from("x").toString("base64")),
        })
      ).status,
    ).toBe(401);
    expect(
      (
        await env.webhook("/webhook/teams", raw, {
          "content-type": "application/json",
          authorization: "Bearer abc",
        })
      ).status,
    ).toBe(401);
  });
});

describe("Teams channels", () => {
  it("reach the channel's bound agent from every thread (Teams names the thread in conversation.id)", async () => {
    await env.secret("channel:teams:hmac_secret", SECRET);
    await env.boundAgent("teams", "19:general@thread.tacv2");
    for (const root of ["1700000000001", "1700000000002"]) {
      env.fake.reply({ content: `the bound agent, thread ${root}` });
      const raw = JSON.stringify({
        type: "message",
        id: root,
        text: "<at>AgentOS</at> who answers?",
        conversation: { id: `19:general@thread.tacv2;messageid=${root}` },
        from: { id: "u1" },
      });
      const answer = await env.webhook("/webhook/teams", raw, {
        "content-type": "application/json",
        authorization: auth(raw),
      });
      expect(answer).toEqual({
        status: 200,
        body: { type: "message", text: `the bound agent, thread ${root}` },
      });
    }
  });
});

describe("Teams turns slower than the webhook waits", () => {
  it("run once: the turn goes on after the webhook's answer, and its reply goes to the channel's own incoming webhook", async () => {
    let probes = 0;
    env.server.service.engine.worker("test").registerFunction({ id: "test::teams_probe" }, () => {
      probes++;
      return { ok: true };
    });
    await env.secret("channel:teams:hmac_secret", SECRET);
    // The team's bare URL leads to another channel: the slow answer must not go there.
    await env.secret("channel:teams:incoming_webhook_url", `${env.platformUrl}/incoming-general`);
    await env.secret(
      "channel:teams:incoming_webhook_url:19:slow@thread.tacv2",
      `${env.platformUrl}/incoming-slow`,
    );
    const realmId = await newRealm(env.server);
    const agentId = await createAgent(env.server, realmId, { tools: ["test::teams_probe"] });
    const channel = { platform: "teams", channelId: "19:slow@thread.tacv2", agentId };
    expect((await call(env.server, "POST", "/api/channels", channel)).status).toBe(201);
    const start = env.platform.length;
    env.fake.reply(
      { toolCalls: [{ name: "test__teams_probe", arguments: {} }] },
      { content: "the slow answer", delayMs: 9500 },
      { toolCalls: [{ name: "test__teams_probe", arguments: {} }] },
      { content: "an answer of a second turn" },
    );
    const raw = JSON.stringify({
      type: "message",
      id: "slow-1",
      text: "<at>AgentOS</at> take your time",
      conversation: { id: "19:slow@thread.tacv2;messageid=slow-1" },
    });
    const answer = await env.webhook("/webhook/teams", raw, {
      "content-type": "application/json",
      authorization: auth(raw),
    });
    expect(answer.body).toEqual({ type: "message", text: "Working on it: the answer will be posted here." });
    const [posted] = (await env.platformCalls(start + 1)).slice(start);
    expect(posted?.path).toBe("/incoming-slow");
    expect(JSON.parse(posted?.body ?? "")).toEqual({ text: "the slow answer" });
    expect(probes).toBe(1);
  });
});

describe("a Teams turn that fails while the webhook waits", () => {
  it("tells the chat user a refusal's reason, but not a provider's failure, which goes to the log", async () => {
    await env.secret("channel:teams:hmac_secret", SECRET);
    const ask = async (conversation: string, id: string) => {
      const raw = JSON.stringify({ type: "message", id, text: "hi", conversation: { id: conversation } });
      return env.webhook("/webhook/teams", raw, {
        "content-type": "application/json",
        authorization: auth(raw),
      });
    };
    // An agent of the default realm on a local model nothing serves here: the provider's failure (502).
    const made = await call(env.server, "POST", "/api/agents", { name: "unserved", model: "ollama/none" });
    expect(made.status).toBe(201);
    const bound = { platform: "teams", channelId: "19:failing", agentId: made.body.id };
    expect((await call(env.server, "POST", "/api/channels", bound)).status).toBe(201);
    const failed = await ask("19:failing", "f1");
    expect(failed.body).toEqual({ type: "message", text: "Sorry, that failed." });
    // An unbound channel reaches the agent `default`, which this service does not have: a 404 of the request.
    const refused = await ask("19:nobody", "f2");
    expect(refused.body).toMatchObject({ text: expect.stringMatching(/^Sorry, that failed: .*not found/) });
  });
});

describe("An agent's own message to a Teams channel", () => {
  it("goes only to that channel's own incoming webhook, never to the team's bare one another channel's URL is", async () => {
    await env.secret("channel:teams:incoming_webhook_url", `${env.platformUrl}/incoming-general`);
    const start = env.platform.length;
    const send = (channelId: string, agentId: string) =>
      env.server.service.engine.trigger({
        function_id: "channel::send",
        payload: { channelId: `teams:${channelId}`, text: "unprompted", agentId },
      });
    // A realm binding a made-up conversation id must not reach the channel behind the bare URL.
    const stranger = await env.boundAgent("teams", "19:made-up@thread.tacv2");
    await expect(send("19:made-up@thread.tacv2", stranger.agentId)).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining("channel:teams:incoming_webhook_url:19:made-up@thread.tacv2"),
    });
    const owner = await env.boundAgent("teams", "19:ops@thread.tacv2");
    await env.secret(
      "channel:teams:incoming_webhook_url:19:ops@thread.tacv2",
      `${env.platformUrl}/incoming-ops`,
    );
    await send("19:ops@thread.tacv2", owner.agentId);
    const [posted] = (await env.platformCalls(start + 1)).slice(start);
    expect(posted?.path).toBe("/incoming-ops");
    expect(JSON.parse(posted?.body ?? "")).toEqual({ text: "unprompted" });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(env.platform.slice(start).map((each) => each.path)).toEqual(["/incoming-ops"]);
  });
});
