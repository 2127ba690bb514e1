import { describe, expect, it } from "vitest";
import { PLATFORMS } from "../../src/channels/platforms.ts";
import { fixture, tampered } from "./fixtures.ts";

/** One recorded request of each platform, with a message in it. */
const MESSAGE_FIXTURES: Record<string, string> = {
  slack: "event-callback",
  discord: "application-command",
  telegram: "text-message",
  whatsapp: "text-message",
  messenger: "text-message",
  line: "text-message",
  twilio: "incoming-sms",
  teams: "outgoing-webhook",
  github: "issue-comment-created",
  matrix: "transaction",
};

/**
 * A field each parser reads, given another type than the platform documents (a signed body the platform
 * would never send, or a sender holding the secret): the request is the sender's mistake.
 */
const MISTYPED: Record<string, { path: Array<string | number>; value: unknown }> = {
  slack: { path: ["event", "text"], value: 5 },
  discord: { path: ["data", "options"], value: "all of them" },
  telegram: { path: ["message", "text"], value: 5 },
  whatsapp: { path: ["entry"], value: {} },
  messenger: { path: ["entry", 0, "messaging", 0], value: null },
  line: { path: ["events", 0, "message", "text"], value: ["hi"] },
  twilio: { path: ["Body"], value: 5 },
  teams: { path: ["text"], value: 5 },
  github: { path: ["comment", "body"], value: 5 },
  matrix: { path: ["events"], value: 5 },
};

/** The body with the value at `path` replaced. */
function withField(body: unknown, path: Array<string | number>, value: unknown): unknown {
  const copy = structuredClone(body) as Record<string | number, unknown>;
  let at = copy;
  for (const step of path.slice(0, -1)) at = at[step] as Record<string | number, unknown>;
  at[path.at(-1) as string | number] = value;
  return copy;
}

describe.each(PLATFORMS.map((platform) => [platform.platform, platform] as const))("%s", (name, platform) => {
  const { envelope, secret, nowMs, env } = fixture(name, MESSAGE_FIXTURES[name] as string);

  it("accepts its recorded request under the fixture's secret", () => {
    expect(platform.verify(envelope, secret, nowMs, env)).toBeNull();
  });

  it("refuses the request under another secret", () => {
    // Discord's secret is a public key, Teams' a base64 key: another valid one of each, so the refusal
    // is the signature's.
    const other =
      name === "discord"
        ? "ab".repeat(32)
        : name === "teams"
          ? Buffer.from("another secret").toString("base64")
          : `${secret}x`;
    expect(platform.verify(envelope, other, nowMs, env)).toMatch(/invalid/i);
  });

  // Matrix and Telegram send a shared token rather than signing the body: nothing to tamper with.
  it.skipIf(name === "matrix" || name === "telegram")(
    "refuses the request when its body changed after signing",
    () => {
      const changed = tampered(
        envelope,
        envelope.rawBody.replace(/[A-Za-z]/, (letter) => (letter === "x" ? "y" : "x")),
      );
      expect(platform.verify(changed, secret, nowMs, env)).toMatch(/invalid/i);
    },
  );

  it("refuses a request without its proof header", () => {
    expect(platform.verify({ ...envelope, headers: {} }, secret, nowMs, env)).toMatch(/missing/i);
  });

  it("names only vault entries of its own platform, and a verify token where it has a GET handshake", () => {
    for (const vaultName of Object.values(platform.vault)) expect(vaultName).toMatch(`channel:${name}:`);
    expect(Boolean(platform.vault.verifyToken)).toBe(Boolean(platform.verifyGet));
  });

  it("finds one message in its recorded request", () => {
    expect(platform.parse(envelope).messages).toHaveLength(1);
  });

  it("refuses a field it reads given another type with a 400 naming the field, not a TypeError", () => {
    const { path, value } = MISTYPED[name] as (typeof MISTYPED)[string];
    const mistyped = { ...envelope, body: withField(envelope.body, path, value) };
    let thrown: unknown;
    try {
      platform.parse(mistyped);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ status: 400, message: expect.stringContaining(path.join(".")) });
  });

  it.skipIf(!platform.replyTarget)(
    "sends an agent's own message where a reply to that channel would go",
    () => {
      const [message] = platform.parse(envelope).messages;
      const target = platform.replyTarget?.(message?.channelId ?? "") ?? {};
      expect(message?.replyTo).toMatchObject(target);
    },
  );
});
