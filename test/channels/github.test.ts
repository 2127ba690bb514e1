import { describe, expect, it } from "vitest";
import { github } from "../../src/channels/github/index.ts";
import { fixture, tampered } from "./fixtures.ts";

describe("GitHub verify", () => {
  const documented = fixture("github", "documented-signature");

  it("accepts the X-Hub-Signature-256 example of GitHub's 'Validating webhook deliveries'", () => {
    expect(github.verify(documented.envelope, documented.secret, 0, {})).toBeNull();
  });

  it("refuses the documented example with a changed body or under another secret", () => {
    const { envelope, secret } = documented;
    expect(github.verify(tampered(envelope, "Hello, World?"), secret, 0, {})).toBe(
      "Invalid X-Hub-Signature-256",
    );
    expect(github.verify(envelope, "It's a Secret to Nobody", 0, {})).toBe("Invalid X-Hub-Signature-256");
  });
});

describe("GitHub parse", () => {
  const { envelope } = fixture("github", "issue-comment-created");

  it("maps a new issue comment to <repo>#<number>, its author and the comment's id", () => {
    expect(github.parse(envelope).messages).toEqual([
      {
        channelId: "Codertocat/Hello-World#1",
        userId: "Codertocat",
        text: "You are totally right! I'll get this fixed right away.",
        eventId: "issue_comment:492700400",
        replyTo: { repo: "Codertocat/Hello-World", number: 1 },
      },
    ]);
  });

  it("skips an edited comment and a bot's comment, and answers a ping", () => {
    const body = envelope.body as Record<string, unknown>;
    expect(github.parse({ ...envelope, body: { ...body, action: "edited" } }).messages).toEqual([]);
    const byBot = { ...body, sender: { ...(body.sender as object), type: "Bot" } };
    expect(github.parse({ ...envelope, body: byBot }).messages).toEqual([]);
    const ping = { ...envelope, headers: { ...envelope.headers, "x-github-event": "ping" } };
    expect(github.parse(ping).reply).toEqual({ status_code: 200, body: { ok: true, pong: true } });
  });
});
