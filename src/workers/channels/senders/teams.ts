import { postJson, type Sender } from "../sender.ts";

/** A reply that missed the webhook's response goes to the channel's incoming webhook (the vault token). */
export const teams: Sender = {
  defaultBaseUrl: "",
  async send({ token }, _replyTo, text) {
    await postJson(String(token), { text });
  },
};
