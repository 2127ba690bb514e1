import { z } from "zod";
import { type Envelope, header, type Inbound, ok, readEvent } from "../envelope.ts";

const account = z.looseObject({ login: z.string().nullish(), type: z.string().nullish() }).nullish();
const numbered = z.looseObject({ number: z.number().nullish() }).nullish();
const payload = z.looseObject({
  action: z.string().nullish(),
  comment: z.looseObject({ id: z.number().nullish(), body: z.string().nullish(), user: account }).nullish(),
  issue: numbered,
  pull_request: numbered,
  repository: z.looseObject({ full_name: z.string().nullish() }).nullish(),
  sender: account,
});

/** New comments on issues and pull requests (bots' own comments skipped); `ping` is acknowledged. */
export function parseGithub(envelope: Envelope) {
  const event = header(envelope, "x-github-event");
  if (event === "ping") return { messages: [], reply: ok({ ok: true, pong: true }) };
  // Only comment events are read: other events may give these names other shapes.
  if (!["issue_comment", "pull_request_review_comment"].includes(event ?? "")) return { messages: [] };
  const { action, comment, issue, pull_request, repository, sender } = readEvent(
    "github",
    payload,
    envelope.body,
  );
  const number = issue?.number ?? pull_request?.number;
  const repo = repository?.full_name;
  if (action !== "created" || !comment?.body?.trim() || number == null || !repo) return { messages: [] };
  if (sender?.type === "Bot" || comment.user?.type === "Bot") return { messages: [] };
  const inbound: Inbound = {
    channelId: `${repo}#${number}`,
    userId: comment.user?.login ?? undefined,
    text: comment.body,
    // The comment's id, not the delivery's: a repository's and its organization's webhooks deliver one
    // comment with two delivery ids (and that header is not signed).
    eventId: comment.id == null ? header(envelope, "x-github-delivery") : `${event}:${comment.id}`,
    replyTo: { repo, number },
  };
  return { messages: [inbound] };
}
