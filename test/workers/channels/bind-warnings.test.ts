import { describe, expect, it } from "vitest";
import { call, createAgent, newRealm } from "../../helpers/control-plane.ts";
import { channelsServer } from "./setup.ts";

const env = channelsServer();

describe("POST /api/channels says which vault entries the channel lacks", () => {
  it("binds a Slack channel without a bot token (201) and warns that replies cannot be sent", async () => {
    await env.secret("channel:slack:signing_secret", "present");
    const realmId = await newRealm(env.server);
    const agentId = await createAgent(env.server, realmId, { name: "warned agent" });
    const bound = await call(env.server, "POST", "/api/channels", {
      platform: "slack",
      channelId: "C-NO-TOKEN",
      agentId,
    });
    expect(bound.status).toBe(201);
    expect(bound.body.warnings).toEqual([
      "channel:slack:bot_token is not in the vault: replies cannot be sent",
    ]);
  });

  it("names a missing webhook secret too, and warns of nothing once both are stored", async () => {
    const realmId = await newRealm(env.server);
    const agentId = await createAgent(env.server, realmId, { name: "line agent" });
    const bind = () =>
      call(env.server, "POST", "/api/channels", { platform: "line", channelId: "U-line", agentId });
    expect((await bind()).body.warnings).toEqual([
      "channel:line:channel_secret is not in the vault: line webhooks are refused",
      "channel:line:channel_token is not in the vault: replies cannot be sent",
    ]);
    await env.secret("channel:line:channel_secret", "s");
    await env.secret("channel:line:channel_token", "t");
    const again = await bind();
    expect(again.status).toBe(201);
    expect(again.body.warnings).toEqual([]);
  });
});

describe("POST /api/channels for a Messenger Page", () => {
  it("names the Page's own token, which is read before the bare page_token", async () => {
    await env.secret("channel:messenger:app_secret", "s");
    const realmId = await newRealm(env.server);
    const agentId = await createAgent(env.server, realmId, { name: "page agent" });
    const bind = () =>
      call(env.server, "POST", "/api/channels", { platform: "messenger", channelId: "1029384756", agentId });
    expect((await bind()).body.warnings).toEqual([
      "channel:messenger:page_token:1029384756 is not in the vault (nor channel:messenger:page_token): replies cannot be sent",
    ]);
    await env.secret("channel:messenger:page_token:1029384756", "t");
    expect((await bind()).body.warnings).toEqual([]);
  });
});

describe("POST /api/channels and the channel's session", () => {
  it("refuses a channel id whose session <platform>:<channelId> would be longer than a session id may be (400)", async () => {
    const realmId = await newRealm(env.server);
    const agentId = await createAgent(env.server, realmId, { name: "long channel agent" });
    const bind = (channelId: string) =>
      call(env.server, "POST", "/api/channels", { platform: "webhook", channelId, agentId });
    const refused = await bind("c".repeat(200));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toContain("at most 192 characters");
    expect((await bind("c".repeat(192 - "webhook:".length))).status).toBe(201);
  });
});
