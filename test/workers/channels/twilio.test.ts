import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { channelsServer } from "./setup.ts";

const env = channelsServer();

describe("Twilio SMS", () => {
  it("checks the signature over the URL and the sorted form fields, and replies through the Messages API", async () => {
    await env.secret("channel:twilio:auth_token", "tw-token");
    await env.boundAgent("twilio", "+15559990000");
    env.fake.reply({ content: "sms reply" });
    const form = {
      AccountSid: "AC1",
      Body: "hello",
      From: "+15550001111",
      MessageSid: "SM1",
      To: "+15559990000",
    };
    const raw = new URLSearchParams(form).toString();
    const url = `${env.server.url}/webhook/twilio`;
    const data = Object.keys(form)
      .sort()
      .reduce((text, name) => text + name + form[name as keyof typeof form], url);
    const signature = createHmac("sha1", "tw-token").update(data).digest("base64");
    const headers = { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature };
    expect((await env.webhook("/webhook/twilio", raw, headers)).status).toBe(200);
    const [sent] = await env.platformCalls(1);
    expect(sent).toMatchObject({
      path: "/2010-04-01/Accounts/AC1/Messages.json",
      headers: { authorization: `Basic ${Buffer.from("AC1:tw-token").toString("base64")}` },
    });
    expect(Object.fromEntries(new URLSearchParams(sent?.body))).toEqual({
      To: "+15550001111",
      From: "+15559990000",
      Body: "sms reply",
    });
    const tampered = new URLSearchParams({ ...form, Body: "changed" }).toString();
    expect((await env.webhook("/webhook/twilio", tampered, headers)).status).toBe(401);
  });
});
