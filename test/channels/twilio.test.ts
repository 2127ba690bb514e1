import { describe, expect, it } from "vitest";
import { twilio } from "../../src/channels/twilio/index.ts";
import { fixture, tampered } from "./fixtures.ts";

describe("Twilio verify", () => {
  const documented = fixture("twilio", "documented-signature");

  it("accepts the X-Twilio-Signature example of Twilio's webhook security guide", () => {
    expect(twilio.verify(documented.envelope, documented.secret, 0, documented.env)).toBeNull();
  });

  it("refuses the documented example with a changed field, another query, another URL or another token", () => {
    const { envelope, secret, env } = documented;
    const changed = tampered(envelope, envelope.rawBody.replace("Digits=1234", "Digits=9999"));
    expect(twilio.verify(changed, secret, 0, env)).toBe("Invalid X-Twilio-Signature");
    const otherQuery = { ...envelope, query_params: { foo: "1", bar: "3" } };
    expect(twilio.verify(otherQuery, secret, 0, env)).toBe("Invalid X-Twilio-Signature");
    expect(twilio.verify(envelope, secret, 0, { AGENTOS_PUBLIC_URL: "https://example.com" })).toBe(
      "Invalid X-Twilio-Signature",
    );
    expect(twilio.verify(envelope, "54321", 0, env)).toBe("Invalid X-Twilio-Signature");
  });

  it("takes the URL Twilio called from the forwarded headers when no public URL is set", () => {
    const { envelope, secret } = documented;
    const forwarded = {
      ...envelope,
      headers: { ...envelope.headers, "x-forwarded-proto": "https", "x-forwarded-host": "mycompany.com" },
    };
    expect(twilio.verify(forwarded, secret, 0, {})).toBeNull();
  });
});

describe("Twilio parse", () => {
  it("maps an incoming SMS to the number it came to (To), the sender being the conversation", () => {
    expect(twilio.parse(fixture("twilio", "incoming-sms").envelope).messages).toEqual([
      {
        channelId: "+18005551212",
        conversationId: "+12349013030",
        userId: "+12349013030",
        text: "Hello from SMS",
        eventId: "SM1234567890ABCDE",
        replyTo: { account: "AC1234567890ABCDE", to: "+12349013030", from: "+18005551212" },
      },
    ]);
  });

  it("finds no message in a voice request (no Body)", () => {
    expect(twilio.parse(fixture("twilio", "documented-signature").envelope).messages).toEqual([]);
  });
});
