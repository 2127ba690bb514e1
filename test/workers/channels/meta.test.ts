import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { channelsServer } from "./setup.ts";

const env = channelsServer();
const hub = (raw: string, secret: string) => ({
  "content-type": "application/json",
  "x-hub-signature-256": `sha256=${createHmac("sha256", secret).update(raw).digest("hex")}`,
});

describe("WhatsApp Cloud and Messenger", () => {
  it("answers the subscription challenge only with the verify token", async () => {
    await env.secret("channel:whatsapp:verify_token", "vt");
    const good = await env.webhook(
      "/webhook/whatsapp?hub.mode=subscribe&hub.verify_token=vt&hub.challenge=12345",
      "",
      {},
      "GET",
    );
    expect(good).toEqual({ status: 200, body: 12345 });
    expect(
      (
        await env.webhook(
          "/webhook/whatsapp?hub.mode=subscribe&hub.verify_token=no&hub.challenge=1",
          "",
          {},
          "GET",
        )
      ).status,
    ).toBe(403);
  });

  it("takes a signed WhatsApp text and replies through the Cloud API", async () => {
    await env.secret("channel:whatsapp:app_secret", "wa-secret");
    await env.secret("channel:whatsapp:access_token", "wa-token");
    await env.boundAgent("whatsapp", "106540352242922");
    env.fake.reply({ content: "whatsapp reply" });
    const raw = JSON.stringify({
      object: "whatsapp_business_account",
      entry: [
        {
          changes: [
            {
              value: {
                metadata: { phone_number_id: "106540352242922" },
                messages: [{ from: "4915100000000", id: "wamid.1", type: "text", text: { body: "hallo" } }],
              },
            },
          ],
        },
      ],
    });
    expect((await env.webhook("/webhook/whatsapp", raw, hub(raw, "wa-secret"))).status).toBe(200);
    const [sent] = await env.platformCalls(1);
    expect(sent).toMatchObject({
      path: "/106540352242922/messages",
      headers: { authorization: "Bearer wa-token" },
    });
    expect(JSON.parse(sent?.body ?? "")).toMatchObject({
      to: "4915100000000",
      text: { body: "whatsapp reply" },
    });
    expect((await env.webhook("/webhook/whatsapp", raw, hub(raw, "other"))).status).toBe(401);
  });

  it("takes a signed Messenger message, skips the Page's echoes, and replies from the Page to the sender", async () => {
    await env.secret("channel:messenger:app_secret", "ms-secret");
    // A service with one Page may keep its token under the bare name.
    await env.secret("channel:messenger:page_token", "page-token");
    await env.boundAgent("messenger", "1234567890");
    env.fake.reply({ content: "messenger reply" });
    const start = env.platform.length;
    const raw = JSON.stringify({
      object: "page",
      entry: [
        {
          id: "1234567890",
          messaging: [
            { sender: { id: "PSID1" }, recipient: { id: "1234567890" }, message: { mid: "m1", text: "hi" } },
            {
              sender: { id: "1234567890" },
              recipient: { id: "PSID1" },
              message: { mid: "m2", text: "echo", is_echo: true },
            },
          ],
        },
      ],
    });
    expect((await env.webhook("/webhook/messenger", raw, hub(raw, "ms-secret"))).status).toBe(200);
    const sent = (await env.platformCalls(start + 1))[start];
    expect(sent).toMatchObject({
      path: "/1234567890/messages",
      headers: { authorization: "Bearer page-token" },
    });
    expect(JSON.parse(sent?.body ?? "")).toMatchObject({
      recipient: { id: "PSID1" },
      message: { text: "messenger reply" },
    });
  });
});
