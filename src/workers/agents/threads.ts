import { createHash } from "node:crypto";
import type { ModelMessage } from "ai";
import type { StateClient } from "../../engine/state/client.ts";
import type { GenerateResult } from "../../llm/types.ts";
import { nowIso } from "../../shared/clock.ts";
import { appendTurn, getSession, openSession, type StoredMessage, threadsScope } from "./store.ts";

/**
 * `/v1` conversations kept as sessions. An OpenAI client sends the whole conversation every time, so a
 * request continues the session whose stored exchange ends exactly where the request's history (all
 * before its last user message) ends: each kept exchange files the conversation so far, reply included,
 * under its hash. A request that continues nothing (a new conversation, or an edited or invented
 * history) starts a session holding its whole history.
 */
interface Thread {
  sessionId: string;
}

/** Stores the request's new messages and the reply in the session they continue; its id. */
export async function keepExchange(
  state: StateClient,
  agentId: string,
  messages: ModelMessage[],
  reply: Pick<GenerateResult, "content" | "toolCalls">,
): Promise<string> {
  const lastUser = messages.findLastIndex((message) => message.role === "user");
  const history = messages.slice(0, Math.max(lastUser, 0));
  const known =
    history.length > 0 ? await state.get<Thread>(threadsScope(agentId), threadKey(history)) : null;
  const continued = known ? await getSession(state, agentId, known.sessionId) : null;
  const fresh = messages.slice(continued ? Math.max(lastUser, 0) : 0);
  const session =
    continued ?? (await openSession(state, agentId, undefined, textOf(messages[lastUser]?.content ?? "")));
  const now = nowIso();
  const stored: StoredMessage[] = [
    ...fresh
      .filter((message) => message.role === "user" || message.role === "assistant")
      .map((message) => ({
        role: message.role as "user" | "assistant",
        content: textOf(message.content),
        createdAt: now,
      })),
    {
      role: "assistant",
      content: reply.content,
      createdAt: now,
      ...(reply.toolCalls.length > 0 ? { toolCalls: reply.toolCalls } : {}),
    },
  ];
  await appendTurn(state, session, stored);
  const after: ModelMessage[] = [...messages, { role: "assistant", content: reply.content }];
  await state.set<Thread>(threadsScope(agentId), threadKey(after), { sessionId: session.id });
  return session.id;
}

/** The conversation as role and text only, hashed: how the client sends it back does not matter. */
function threadKey(messages: ModelMessage[]): string {
  const normal = messages
    .filter((message) => message.role !== "system")
    .map((message) => [message.role, textOf(message.content)]);
  return createHash("sha256").update(JSON.stringify(normal)).digest("hex");
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: { type?: unknown; text?: unknown; toolName?: unknown }) =>
      typeof part.text === "string"
        ? part.text
        : part.type === "tool-call"
          ? `[${String(part.toolName)}]`
          : "",
    )
    .join("");
}
