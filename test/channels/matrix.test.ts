import { describe, expect, it } from "vitest";
import { matrix } from "../../src/channels/matrix/index.ts";
import { OWN_MARK } from "../../src/channels/matrix/parse.ts";
import { fixture } from "./fixtures.ts";

describe("Matrix", () => {
  const { envelope, secret } = fixture("matrix", "transaction");

  it("maps the text message of a transaction to its room, skipping the membership event", () => {
    expect(matrix.parse(envelope)).toEqual({
      messages: [
        {
          channelId: "!jEsUZKDJdhlrceRyVU:example.org",
          userId: "@example:example.org",
          text: "This is an example text message",
          eventId: "$143273582443PhrSn:example.org",
          replyTo: { room: "!jEsUZKDJdhlrceRyVU:example.org" },
        },
      ],
      reply: { status_code: 200, body: {} },
    });
  });

  it("skips the echo of a message this service sent", () => {
    const body = JSON.parse(
      envelope.rawBody.replace('"msgtype": "m.text"', `"msgtype": "m.text", "${OWN_MARK}": true`),
    );
    expect(matrix.parse({ ...envelope, body }).messages).toEqual([]);
  });

  it("does not answer another bot's m.notice, which the specification says bots must never answer", () => {
    const body = JSON.parse(envelope.rawBody.replace('"msgtype": "m.text"', '"msgtype": "m.notice"'));
    expect(matrix.parse({ ...envelope, body }).messages).toEqual([]);
  });

  it("takes the homeserver token from the access_token query parameter too", () => {
    const legacy = { ...envelope, headers: {}, query_params: { access_token: secret } };
    expect(matrix.verify(legacy, secret, 0, {})).toBeNull();
  });
});
