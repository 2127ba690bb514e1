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

describe("GitHub channels", () => {
  it("take an agent's message only to <owner>/<repo>#<number>: a bound id cannot steer the token to other API paths", async () => {
    await env.secret("channel:github:token", "ghp_test");
    const start = env.platform.length;
    for (const channelId of [
      "../../user/repos?x=#1",
      "acme/app/../../../gists#1",
      "acme/app#1/../../x",
      "acme/..#1",
    ]) {
      const { agentId } = await env.boundAgent("github", channelId);
      await expect(
        env.server.service.engine.trigger({
          function_id: "channel::send",
          payload: { channelId: `github:${channelId}`, text: "hi", agentId },
        }),
      ).rejects.toMatchObject({ status: 400, message: expect.stringContaining("<owner>/<repo>#") });
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(env.platform.slice(start)).toEqual([]);
  });
});

describe("GitHub comments delivered twice", () => {
  it("run one turn when the repository's and the organization's webhook both deliver a comment", async () => {
    await env.secret("channel:github:webhook_secret", "gh-secret");
    await env.secret("channel:github:token", "ghp_test");
    await env.boundAgent("github", "acme/twice#7");
    const turns = env.fake.requests.length;
    const start = env.platform.length;
    env.fake.reply({ content: "answered once" });
    const body = JSON.stringify({
      action: "created",
      comment: { id: 9001, body: "@agent once please", user: { login: "ann", type: "User" } },
      issue: { number: 7 },
      repository: { full_name: "acme/twice" },
      sender: { type: "User" },
    });
    for (const delivery of ["repo-hook-delivery", "org-hook-delivery"]) {
      const headers = {
        "content-type": "application/json",
        "x-github-event": "issue_comment",
        "x-github-delivery": delivery,
        "x-hub-signature-256": sign(body),
      };
      expect((await env.webhook("/webhook/github", body, headers)).status).toBe(200);
    }
    await env.platformCalls(start + 1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(env.fake.requests.length - turns).toBe(1);
    expect(env.platform.length).toBe(start + 1);
  });
});
