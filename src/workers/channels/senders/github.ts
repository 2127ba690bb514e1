import { postJson, type Sender } from "../sender.ts";

export const github: Sender = {
  defaultBaseUrl: "https://api.github.com",
  async send({ baseUrl, token }, replyTo, text) {
    await postJson(
      `${baseUrl}/repos/${replyTo.repo}/issues/${replyTo.number}/comments`,
      { body: text },
      {
        authorization: `Bearer ${token}`,
        accept: "application/vnd.github+json",
        "user-agent": "AgentOS",
      },
    );
  },
};
