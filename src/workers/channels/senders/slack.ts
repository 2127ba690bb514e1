import { postJson, type Sender } from "../sender.ts";

export const slack: Sender = {
  defaultBaseUrl: "https://slack.com/api",
  async send({ baseUrl, token }, replyTo, text) {
    const answer = (await postJson(
      `${baseUrl}/chat.postMessage`,
      { ...replyTo, text },
      { authorization: `Bearer ${token}` },
    )) as {
      ok?: boolean;
      error?: string;
    };
    if (answer?.ok === false) throw new Error(`Slack refused the message: ${answer.error}`);
  },
};
