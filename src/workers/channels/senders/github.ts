import { type Adapter, postJson } from "../adapter.ts";
import { verifyHubSignature } from "../hub-signature.ts";
import { parseGithub } from "./parse.ts";

export const github: Adapter = {
  platform: "github",
  secretName: "webhook_secret",
  tokenName: "token",
  defaultBaseUrl: "https://api.github.com",
  maxChunk: 65_000,
  verify: verifyHubSignature,
  parse: parseGithub,
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
