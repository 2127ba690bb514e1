import { describe, expect, it } from "vitest";
import { slack } from "../../src/channels/slack/index.ts";
import { fixture, tampered } from "./fixtures.ts";

describe("Slack verify", () => {
  const documented = fixture("slack", "documented-signature");

  it("accepts the signature example of Slack's 'Verifying requests' guide", () => {
    expect(slack.verify(documented.envelope, documented.secret, documented.nowMs, {})).toBeNull();
  });

  it("refuses the documented example with a changed body, under another secret, or over 5 minutes old", () => {
    const { envelope, secret, nowMs } = documented;
    const changed = tampered(envelope, envelope.rawBody.replace("roadrunner", "coyote"));
    expect(slack.verify(changed, secret, nowMs, {})).toBe("Invalid Slack signature");
    expect(slack.verify(envelope, "8f742231b10e8888abcd99yyyzzz85a6", nowMs, {})).toBe(
      "Invalid Slack signature",
    );
    expect(slack.verify(envelope, secret, nowMs + 301_000, {})).toMatch(/^Stale request/);
    expect(slack.verify(envelope, secret, nowMs - 301_000, {})).toMatch(/^Stale request/);
    expect(slack.verify(envelope, secret, nowMs + 299_000, {})).toBeNull();
  });
});

describe("Slack parse", () => {
  it("maps a message event to its channel, thread and the message's channel and ts as its id", () => {
    expect(slack.parse(fixture("slack", "event-callback").envelope)).toEqual({
      messages: [
        {
          channelId: "C123ABC456",
          userId: "U123ABC456",
          text: "Hello world",
          eventId: "C123ABC456:1355517523.000005",
          replyTo: { channel: "C123ABC456", thread_ts: "1355517523.000005" },
        },
      ],
    });
  });

  it("answers the URL verification with its challenge and no message", () => {
    expect(slack.parse(fixture("slack", "url-verification").envelope)).toEqual({
      messages: [],
      reply: {
        status_code: 200,
        body: { challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" },
      },
    });
  });

  it("skips a bot's message and an edited one", () => {
    const { envelope } = fixture("slack", "event-callback");
    const body = envelope.body as { event: Record<string, unknown> };
    for (const change of [{ bot_id: "B1" }, { subtype: "message_changed" }]) {
      const changed = { ...envelope, body: { ...body, event: { ...body.event, ...change } } };
      expect(slack.parse(changed).messages).toEqual([]);
    }
  });

  it("acknowledges events of other types whatever shape they give the names a message uses", () => {
    const { envelope } = fixture("slack", "event-callback");
    const body = envelope.body as Record<string, unknown>;
    const created = {
      type: "channel_created",
      channel: { id: "C024BE91L", name: "fun", creator: "U024BE7LH" },
    };
    expect(slack.parse({ ...envelope, body: { ...body, event: created } })).toEqual({ messages: [] });
  });
});
