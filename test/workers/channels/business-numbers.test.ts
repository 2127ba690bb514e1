import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { call } from "../../helpers/control-plane.ts";
import { channelsServer } from "./setup.ts";

const env = channelsServer();

/** The ids of an agent's sessions. */
async function sessionsOf(agentId: string): Promise<string[]> {
  const answer = await call(env.server, "GET", `/api/agents/${agentId}/sessions`);
  expect(answer.status).toBe(200);
  return (answer.body.sessions as Array<{ id: string }>).map((session) => session.id).sort();
}

/** A WhatsApp Cloud API text message webhook (the messages webhook reference's shape). */
function whatsappText(phoneNumberId: string, displayNumber: string, from: string, id: string, text: string) {
  return JSON.stringify({
    object: "whatsapp_business_account",
    entry: [
      {
        id: "102290129340398",
        changes: [
          {
            value: {
              messaging_product: "whatsapp",
              metadata: { display_phone_number: displayNumber, phone_number_id: phoneNumberId },
              contacts: [{ profile: { name: "Sheena Nelson" }, wa_id: from }],
              messages: [{ from, id, timestamp: "1749416383", type: "text", text: { body: text } }],
            },
            field: "messages",
          },
        ],
      },
    ],
  });
}

const hub = (raw: string) => ({
  "content-type": "application/json",
  "x-hub-signature-256": `sha256=${createHmac("sha256", "wa-secret").update(raw).digest("hex")}`,
});

/** Twilio's incoming message form, signed with the test auth token at the URL the service is called on. */
function twilioSms(to: string, from: string, sid: string, body: string) {
  const form = { AccountSid: "AC1", Body: body, From: from, MessageSid: sid, To: to };
  const url = `${env.server.url}/webhook/twilio`;
  const data = Object.keys(form)
    .sort()
    .reduce((text, name) => text + name + form[name as keyof typeof form], url);
  const signature = createHmac("sha1", "tw-token").update(data).digest("base64");
  return {
    raw: new URLSearchParams(form).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature },
  };
}

const CUSTOMER = "16505551234";
const OTHER_CUSTOMER = "16505550000";

describe("WhatsApp and Twilio bindings are by the business number a message came to", () => {
  it("routes a WhatsApp message to the binding of the business number, one session per customer", async () => {
    await env.secret("channel:whatsapp:app_secret", "wa-secret");
    await env.secret("channel:whatsapp:access_token", "wa-token");
    // Realm A's business number (its phone_number_id) is bound to realm A's agent.
    const realmA = await env.boundAgent("whatsapp", "106540352242922");
    // Realm B binds a customer's own number, as if it were its channel: it must not capture the
    // customer's conversations with realm A's number.
    const realmB = await env.boundAgent("whatsapp", CUSTOMER);
    env.fake.reply({ content: "answer one" }, { content: "answer two" });
    const start = env.platform.length;

    const first = whatsappText("106540352242922", "15550783881", CUSTOMER, "wamid.A1", "color?");
    expect((await env.webhook("/webhook/whatsapp", first, hub(first))).status).toBe(200);
    await env.platformCalls(start + 1);
    const second = whatsappText("106540352242922", "15550783881", OTHER_CUSTOMER, "wamid.A2", "size?");
    expect((await env.webhook("/webhook/whatsapp", second, hub(second))).status).toBe(200);
    const sent = (await env.platformCalls(start + 2)).slice(start);

    expect(await sessionsOf(realmA.agentId)).toEqual([
      `whatsapp:106540352242922:${OTHER_CUSTOMER}`,
      `whatsapp:106540352242922:${CUSTOMER}`,
    ]);
    expect(await sessionsOf(realmB.agentId)).toEqual([]);
    // Each answer goes from the business number to its customer.
    expect(sent.map((request) => [request.path, JSON.parse(request.body).to])).toEqual([
      ["/106540352242922/messages", CUSTOMER],
      ["/106540352242922/messages", OTHER_CUSTOMER],
    ]);
  });

  it("routes a Twilio message to the binding of its To number, one session per sender", async () => {
    await env.secret("channel:twilio:auth_token", "tw-token");
    const realmA = await env.boundAgent("twilio", "+18005551212");
    const realmB = await env.boundAgent("twilio", "+12349013030");
    env.fake.reply({ content: "sms answer" });
    const start = env.platform.length;

    const sms = twilioSms("+18005551212", "+12349013030", "SM-A1", "hello");
    expect((await env.webhook("/webhook/twilio", sms.raw, sms.headers)).status).toBe(200);
    const [sent] = (await env.platformCalls(start + 1)).slice(start);

    expect(await sessionsOf(realmA.agentId)).toEqual(["twilio:+18005551212:+12349013030"]);
    expect(await sessionsOf(realmB.agentId)).toEqual([]);
    expect(Object.fromEntries(new URLSearchParams(sent?.body))).toEqual({
      To: "+12349013030",
      From: "+18005551212",
      Body: "sms answer",
    });
  });
});

/** A Messenger `messages` webhook (the reference's text message example): a customer's PSID to a Page. */
function messengerText(pageId: string, psid: string, mid: string, text: string) {
  return JSON.stringify({
    object: "page",
    entry: [
      {
        id: pageId,
        time: 1458692752478,
        messaging: [
          {
            sender: { id: psid },
            recipient: { id: pageId },
            timestamp: 1458692752478,
            message: { mid, text },
          },
        ],
      },
    ],
  });
}

const metaSigned = (raw: string) => ({
  "content-type": "application/json",
  "x-hub-signature-256": `sha256=${createHmac("sha256", "ms-secret").update(raw).digest("hex")}`,
});

describe("Messenger bindings are by the Page a message came to", () => {
  const PAGE_A = "104298705432101";
  const PAGE_B = "104298705432202";
  const PSID = "6943521570983142";

  it("routes a message to the binding of its Page, one session per customer, answered with that Page's token", async () => {
    await env.secret("channel:messenger:app_secret", "ms-secret");
    await env.secret(`channel:messenger:page_token:${PAGE_A}`, "token-a");
    await env.secret(`channel:messenger:page_token:${PAGE_B}`, "token-b");
    const realmA = await env.boundAgent("messenger", PAGE_A);
    const realmB = await env.boundAgent("messenger", PAGE_B);
    // A third realm binds the customer's PSID, as if it were a channel: it must not capture the
    // customer's conversation with realm A's Page.
    const realmC = await env.boundAgent("messenger", PSID);
    env.fake.reply({ content: "from page a" }, { content: "from page b" });
    const start = env.platform.length;

    const toA = messengerText(PAGE_A, PSID, "m_A1", "opening hours?");
    expect((await env.webhook("/webhook/messenger", toA, metaSigned(toA))).status).toBe(200);
    await env.platformCalls(start + 1);
    const toB = messengerText(PAGE_B, PSID, "m_B1", "delivery?");
    expect((await env.webhook("/webhook/messenger", toB, metaSigned(toB))).status).toBe(200);
    const sent = (await env.platformCalls(start + 2)).slice(start);

    expect(await sessionsOf(realmA.agentId)).toEqual([`messenger:${PAGE_A}:${PSID}`]);
    expect(await sessionsOf(realmB.agentId)).toEqual([`messenger:${PAGE_B}:${PSID}`]);
    expect(await sessionsOf(realmC.agentId)).toEqual([]);
    // Each answer goes from its Page, with that Page's token, to the customer.
    expect(
      sent.map((request) => [
        request.path,
        request.headers.authorization,
        JSON.parse(request.body).recipient,
      ]),
    ).toEqual([
      [`/${PAGE_A}/messages`, "Bearer token-a", { id: PSID }],
      [`/${PAGE_B}/messages`, "Bearer token-b", { id: PSID }],
    ]);
  });
});
