import type { Sender } from "../sender.ts";

export const twilio: Sender = {
  defaultBaseUrl: "https://api.twilio.com",
  async send({ baseUrl, token }, replyTo, text) {
    const account = String(replyTo.account);
    const response = await fetch(`${baseUrl}/2010-04-01/Accounts/${account}/Messages.json`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${account}:${token}`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({
        To: String(replyTo.to),
        From: String(replyTo.from),
        Body: text,
      }).toString(),
      signal: AbortSignal.timeout(30_000),
    });
    if (!response.ok)
      throw new Error(`Twilio answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  },
};
