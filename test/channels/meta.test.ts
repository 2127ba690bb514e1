import { describe, expect, it } from "vitest";
import { messenger } from "../../src/channels/messenger/index.ts";
import { whatsapp } from "../../src/channels/whatsapp/index.ts";
import { fixture } from "./fixtures.ts";

describe("Messenger parse", () => {
  it("maps a message to the Page it came to, the sender's PSID being the conversation", () => {
    expect(messenger.parse(fixture("messenger", "text-message").envelope).messages).toEqual([
      {
        channelId: "<PAGE_ID>",
        conversationId: "<PSID>",
        userId: "<PSID>",
        text: "hello, world!",
        eventId: "mid.1457764197618:41d102a3e1ae206a38",
        replyTo: { page: "<PAGE_ID>", recipient: "<PSID>" },
      },
    ]);
  });

  it("maps each entry of a batched delivery to its own Page", () => {
    const { envelope } = fixture("messenger", "text-message");
    const body = envelope.body as { entry: Array<Record<string, unknown>> };
    const [entry] = body.entry;
    const other = JSON.parse(JSON.stringify(entry).replaceAll("<PAGE_ID>", "<OTHER_PAGE_ID>"));
    const batched = { ...envelope, body: { ...body, entry: [entry, other] } };
    expect(messenger.parse(batched).messages.map(({ channelId, replyTo }) => [channelId, replyTo])).toEqual([
      ["<PAGE_ID>", { page: "<PAGE_ID>", recipient: "<PSID>" }],
      ["<OTHER_PAGE_ID>", { page: "<OTHER_PAGE_ID>", recipient: "<PSID>" }],
    ]);
  });

  it("has no reply target: a Page alone does not say which customer a message is for", () => {
    expect(messenger.replyTarget).toBeUndefined();
  });

  it("skips the Page's own echoes", () => {
    const { envelope } = fixture("messenger", "text-message");
    const echo = JSON.parse(
      envelope.rawBody.replace('"text": "hello, world!"', '"text": "hi", "is_echo": true'),
    );
    expect(messenger.parse({ ...envelope, body: echo }).messages).toEqual([]);
  });
});

describe("WhatsApp parse", () => {
  it("maps a text message to the business number it came to, the sender being the conversation", () => {
    expect(whatsapp.parse(fixture("whatsapp", "text-message").envelope).messages).toEqual([
      {
        channelId: "27681414235104944",
        conversationId: "16315551234",
        userId: "16315551234",
        text: "Hello this is an answer",
        eventId: "wamid.ABGGFlCGg0cvAgo-sJQh43L5Pe4W",
        replyTo: { phone_number_id: "27681414235104944", to: "16315551234" },
      },
    ]);
  });

  it("maps each message of one delivery to the business number it came to", () => {
    const { envelope, secret } = fixture("whatsapp", "two-business-numbers");
    expect(whatsapp.verify(envelope, secret, 0, {})).toBeNull();
    expect(
      whatsapp.parse(envelope).messages.map(({ channelId, conversationId, replyTo }) => ({
        channelId,
        conversationId,
        replyTo,
      })),
    ).toEqual([
      {
        channelId: "106540352242922",
        conversationId: "16505551234",
        replyTo: { phone_number_id: "106540352242922", to: "16505551234" },
      },
      {
        channelId: "27681414235104944",
        conversationId: "16505551234",
        replyTo: { phone_number_id: "27681414235104944", to: "16505551234" },
      },
    ]);
  });

  it("does not take a Messenger payload, nor Messenger a WhatsApp one", () => {
    expect(whatsapp.parse(fixture("messenger", "text-message").envelope).messages).toEqual([]);
    expect(messenger.parse(fixture("whatsapp", "text-message").envelope).messages).toEqual([]);
  });
});

describe("Meta's subscription handshake", () => {
  const { envelope } = fixture("whatsapp", "text-message");
  const handshake = (query: Record<string, string>) => ({ ...envelope, method: "GET", query_params: query });

  it("answers hub.challenge when hub.verify_token matches", () => {
    const query = { "hub.mode": "subscribe", "hub.verify_token": "vt", "hub.challenge": "1158201444" };
    expect(whatsapp.verifyGet?.(handshake(query), "vt")).toEqual({ status_code: 200, body: "1158201444" });
  });

  it("refuses another verify token with 403", () => {
    const query = { "hub.mode": "subscribe", "hub.verify_token": "guess", "hub.challenge": "1" };
    expect(messenger.verifyGet?.(handshake(query), "vt")?.status_code).toBe(403);
  });
});
