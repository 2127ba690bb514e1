import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { channelsServer } from "./setup.ts";

const env = channelsServer();
const sign = (body: string, secret = "gh-secret") =>
  `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

describe("GitHub", () => {
  it("answers a new issue comment with a comment, pings with ok, and refuses a bad signature", async () => {
    await env.secret("channel:github:webhook_secret", "gh-secret");
    await env.secret("channel:github:token", "ghp_test");
    await env.boundAgent("github", "acme/app#12");
    const ping = JSON.stringify({ zen: "keep it simple" });
    expect(
      (
        await env.webhook("/webhook/github", ping, {
          "content-type": "application/json",
          "x-github-event": "ping",
          "x-hub-signature-256": sign(ping),
        })
      ).status,
    ).toBe(200);
    env.fake.reply({ content: "Looking into it." });
    const body = JSON.stringify({
      action: "created",
      comment: { body: "@agent please check", user: { login: "ann", type: "User" } },
      issue: { number: 12 },
      repository: { full_name: "acme/app" },
      sender: { type: "User" },
    });
    const headers = {
      "content-type": "application/json",
      "x-github-event": "issue_comment",
      "x-github-delivery": "d-1",
      "x-hub-signature-256": sign(body),
    };
    expect((await env.webhook("/webhook/github", body, headers)).status).toBe(200);
    const [comment] = await env.platformCalls(1);
    expect(comment).toMatchObject({
      path: "/repos/acme/app/issues/12/comments",
      headers: { authorization: "Bearer ghp_test" },
    });
    expect(JSON.parse(comment?.body ?? "")).toEqual({ body: "Looking into it." });
    expect(
      (await env.webhook("/webhook/github", body, { ...headers, "x-hub-signature-256": sign(body, "wrong") }))
        .status,
    ).toBe(401);
  });
});
