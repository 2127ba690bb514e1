import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
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
