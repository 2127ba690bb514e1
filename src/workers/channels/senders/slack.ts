import { postJson, type Sender } from "../sender.ts";

/**
 * Slack reads `<!channel>`, `<!here>`, `<@user>` and links in a message's text as markup: an agent's
 * text (which a chat user can prompt) is escaped as Slack documents, so it pings no one.
 */
const slackText = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export const slack: Sender = {
  defaultBaseUrl: "https://slack.com/api",
  async send({ baseUrl, token }, replyTo, text) {
    const answer = (await postJson(
      `${baseUrl}/chat.postMessage`,
      { ...replyTo, text: slackText(text) },
      { authorization: `Bearer ${token}` },
    )) as {
      ok?: boolean;
      error?: string;
    };
    if (answer?.ok === false) throw new Error(`Slack refused the message: ${answer.error}`);
  },
};
