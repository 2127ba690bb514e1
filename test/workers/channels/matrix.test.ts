import { describe, expect, it } from "vitest";
import { channelsServer } from "./setup.ts";

const env = channelsServer();

describe("Matrix application service", () => {
  it("takes a transaction with the homeserver token, answers in the room, and skips its own echo", async () => {
    await env.secret("channel:matrix:hs_token", "hs-token");
    await env.secret("channel:matrix:as_token", "as-token");
    await env.boundAgent("matrix", "!room:example.org");
    env.fake.reply({ content: "matrix answer" });
    const raw = JSON.stringify({
      events: [
        {
          type: "m.room.message",
          event_id: "$e1",
          room_id: "!room:example.org",
          sender: "@ann:example.org",
          content: { msgtype: "m.text", body: "hi" },
        },
        {
          type: "m.room.message",
          event_id: "$e0",
          room_id: "!room:example.org",
          sender: "@bot:example.org",
          content: { msgtype: "m.text", body: "old", "agentos.reply": true },
        },
      ],
    });
    const path = "/webhook/matrix/_matrix/app/v1/transactions/txn1";
    expect(
      await env.webhook(
        path,
        raw,
        { "content-type": "application/json", authorization: "Bearer hs-token" },
        "PUT",
      ),
    ).toEqual({ status: 200, body: {} });
    const [sent] = await env.platformCalls(1);
    expect(sent?.method).toBe("PUT");
    expect(sent?.path).toMatch(
      /^\/_matrix\/client\/v3\/rooms\/!room%3Aexample\.org\/send\/m\.room\.message\//,
    );
    expect(JSON.parse(sent?.body ?? "")).toEqual({
      // A notice: by the specification what bots send, and what other bots must not answer.
      msgtype: "m.notice",
      body: "matrix answer",
      "agentos.reply": true,
      // Present and empty: @room in an agent's text notifies no one (Matrix 1.7 intentional mentions).
      "m.mentions": {},
    });
    expect(
      (
        await env.webhook(
          path,
          raw,
          { "content-type": "application/json", authorization: "Bearer wrong" },
          "PUT",
        )
      ).status,
    ).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(env.platform.length).toBe(1);
  });
});
