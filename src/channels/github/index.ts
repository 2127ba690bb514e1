import { badRequest } from "../../shared/errors.ts";
import { verifyHubSignature } from "../hub-signature.ts";
import type { Platform } from "../platform.ts";
import { parseGithub } from "./parse.ts";

/**
 * An owner, a repository and a number as GitHub spells them: a channel id is bound by hand, and
 * `..`, `?` or another `/` in it would send the token to another API path than an issue's comments.
 */
const ISSUE = /^([\w-]+)\/((?!\.\.?#)[\w.-]+)#([1-9]\d{0,9})$/;

/** The issue or pull request of a channel `<owner>/<repo>#<number>`; anything else is a 400. */
export function githubIssue(channelId: string): { repo: string; number: number } {
  const match = ISSUE.exec(channelId);
  if (!match)
    throw badRequest(`A GitHub channel is <owner>/<repo>#<issue or pull request number>, not ${channelId}`);
  return { repo: `${match[1]}/${match[2]}`, number: Number(match[3]) };
}

export const github: Platform<"github"> = {
  platform: "github",
  vault: { secret: "channel:github:webhook_secret", token: "channel:github:token" },
  maxChunk: 65_000,
  verify: verifyHubSignature,
  parse: parseGithub,
  replyTarget: githubIssue,
};
