import { githubIssue } from "../../../channels/github/index.ts";
import { postJson, type Sender } from "../sender.ts";

export const github: Sender = {
  defaultBaseUrl: "https://api.github.com",
  async send({ baseUrl, token }, replyTo, text) {
    const { repo, number } = githubIssue(`${replyTo.repo}#${replyTo.number}`);
    await postJson(
      `${baseUrl}/repos/${repo}/issues/${number}/comments`,
      { body: text },
      {
        authorization: `Bearer ${token}`,
        accept: "application/vnd.github+json",
        "user-agent": "AgentOS",
      },
    );
  },
};
