import { postJson, type Sender } from "../sender.ts";

export const telegram: Sender = {
  defaultBaseUrl: "https://api.telegram.org",
  async send({ baseUrl, token }, replyTo, text) {
    await postJson(`${baseUrl}/bot${token}/sendMessage`, { ...replyTo, text });
  },
};
