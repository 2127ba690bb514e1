import { postJson, type Sender } from "../sender.ts";

export const messenger: Sender = {
  defaultBaseUrl: "https://graph.facebook.com/v21.0",
  async send({ baseUrl, token }, replyTo, text) {
    // From the Page the message came to (a Page ID is a number: nothing else may steer the token to
    // another Graph path); a reply queued before replies named their Page goes from the token's (`me`).
    const page = replyTo.page ?? "me";
    if (page !== "me" && !/^\d{1,32}$/.test(String(page))) throw new Error(`Not a Page ID: ${String(page)}`);
    await postJson(
      `${baseUrl}/${page}/messages`,
      { recipient: { id: replyTo.recipient }, messaging_type: "RESPONSE", message: { text } },
      { authorization: `Bearer ${token}` },
    );
  },
};
