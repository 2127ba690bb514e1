import { type Adapter, postJson } from "../adapter.ts";
import { parseSlack } from "./parse.ts";
import { verifySlack } from "./verify.ts";

export const slack: Adapter = {
  platform: "slack",
  secretName: "signing_secret",
  tokenName: "bot_token",
  defaultBaseUrl: "https://slack.com/api",
  maxChunk: 4000,
  verify: verifySlack,
  parse: parseSlack,
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
