import { describe, expect, it } from "vitest";
import { discord } from "../../src/channels/discord/index.ts";
import { fixture } from "./fixtures.ts";

describe("Discord", () => {
  it("answers a PING with a PONG", () => {
    const ping = fixture("discord", "ping");
    expect(discord.verify(ping.envelope, ping.secret, ping.nowMs, {})).toBeNull();
    expect(discord.parse(ping.envelope)).toEqual({
      messages: [],
      reply: { status_code: 200, body: { type: 1 } },
    });
  });

  it("defers a slash command and maps it to its channel, its options as text, and the interaction's token", () => {
    expect(discord.parse(fixture("discord", "application-command").envelope)).toEqual({
      messages: [
        {
          channelId: "645027906669510667",
          userId: "53908232506183680",
          text: "The Gitrog Monster",
          eventId: "786008729715212338",
          replyTo: { application_id: "775799577604522054", token: "A_UNIQUE_TOKEN" },
        },
      ],
      reply: { status_code: 200, body: { type: 5 } },
    });
  });

  it("refuses a public key that is not 32 bytes of hex, and a signature that is not 64", () => {
    const { envelope, secret } = fixture("discord", "ping");
    expect(discord.verify(envelope, "not-a-key", 0, {})).toMatch(/32-byte public key/);
    const short = { ...envelope, headers: { ...envelope.headers, "x-signature-ed25519": "ab" } };
    expect(discord.verify(short, secret, 0, {})).toBe("Invalid Discord signature");
  });

  it("refuses a signature over another timestamp", () => {
    const { envelope, secret, nowMs } = fixture("discord", "ping");
    const later = { ...envelope, headers: { ...envelope.headers, "x-signature-timestamp": "1700000001" } };
    expect(discord.verify(later, secret, nowMs, {})).toBe("Invalid Discord signature");
  });

  it("refuses a signed interaction more than 5 minutes from its timestamp (a captured one replayed once its id is forgotten)", () => {
    const { envelope, secret, nowMs } = fixture("discord", "ping");
    expect(discord.verify(envelope, secret, nowMs + 299_000, {})).toBeNull();
    expect(discord.verify(envelope, secret, nowMs + 8 * 24 * 3600_000, {})).toMatch(/X-Signature-Timestamp/);
    expect(discord.verify(envelope, secret, nowMs - 301_000, {})).toMatch(/X-Signature-Timestamp/);
  });
});
