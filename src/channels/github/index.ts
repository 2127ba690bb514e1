import { verifyHubSignature } from "../hub-signature.ts";
import type { Platform } from "../platform.ts";
import { parseGithub } from "./parse.ts";

export const github: Platform<"github"> = {
  platform: "github",
  vault: { secret: "channel:github:webhook_secret", token: "channel:github:token" },
  maxChunk: 65_000,
  verify: verifyHubSignature,
  parse: parseGithub,
  // A channel is `<owner>/<repo>#<issue or pull request number>`.
  replyTarget(channelId) {
    const [repo, number] = channelId.split("#");
    return { repo, number: Number(number) };
  },
};
