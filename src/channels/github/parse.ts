import { type Envelope, header, type Inbound, ok } from "../envelope.ts";

interface Comment {
  body?: string;
  user?: { login?: string; type?: string };
}
interface Payload {
  action?: string;
  comment?: Comment;
  issue?: { number?: number };
  pull_request?: { number?: number };
  repository?: { full_name?: string };
  sender?: { type?: string };
}

/** New comments on issues and pull requests (bots' own comments skipped); `ping` is acknowledged. */
export function parseGithub(envelope: Envelope) {
  const event = header(envelope, "x-github-event");
  if (event === "ping") return { messages: [], reply: ok({ ok: true, pong: true }) };
  const payload = (envelope.body ?? {}) as Payload;
  if (!["issue_comment", "pull_request_review_comment"].includes(event ?? "") || payload.action !== "created")
    return { messages: [] };
  const number = payload.issue?.number ?? payload.pull_request?.number;
  const repo = payload.repository?.full_name;
  if (!payload.comment?.body?.trim() || number === undefined || !repo) return { messages: [] };
  if (payload.sender?.type === "Bot" || payload.comment.user?.type === "Bot") return { messages: [] };
  const inbound: Inbound = {
    channelId: `${repo}#${number}`,
    userId: payload.comment.user?.login,
    text: payload.comment.body,
    eventId: header(envelope, "x-github-delivery"),
    replyTo: { repo, number },
  };
  return { messages: [inbound] };
}
