import { call } from "../../engine/call.ts";
import { systemPrincipal } from "../../engine/types.ts";
import { MAX_MEMORY_CONTENT_BYTES } from "../../shared/limits.ts";
import { utf8Head } from "../../shared/utf8.ts";
import type { ChatDeps } from "./chat-deps.ts";
import type { Agent } from "./schema.ts";
import type { StoredMessage } from "./store.ts";

const MEMORY_HITS = 5;

// The turn's agent was loaded as the caller before the turn began: its memory is used as the service,
// so that the memory worker does not look the agent up again (its own check is for other callers).
const asService = { auth: systemPrincipal };

/** Memories are an enrichment: with no memory worker, or when it fails, the turn goes on without them. */
export async function recall(deps: ChatDeps, agentId: string, query: string): Promise<string[]> {
  try {
    const found = await call(
      deps.trigger,
      "memory::recall",
      { agentId, query: query.slice(0, 2000), limit: MEMORY_HITS },
      asService,
    );
    return found.results.map((entry) => entry.content).filter(Boolean);
  } catch {
    return [];
  }
}

/** Memories are an enrichment: a store that fails does not fail the answered turn. */
export async function remember(
  deps: ChatDeps,
  registered: Set<string>,
  agent: Agent,
  sessionId: string,
  turn: StoredMessage[],
): Promise<void> {
  // An empty message (a reply of tool calls alone) is no memory, and would fail the others' store; a
  // long one is cut to what memory takes, in bytes (32 768 characters of CJK text were refused, and with
  // them the turn's other memories: they are stored in one call).
  const entries = turn
    .filter((message) => message.content.length > 0)
    .map((message) => ({
      sessionId,
      role: message.role,
      content: utf8Head(message.content, MAX_MEMORY_CONTENT_BYTES),
    }));
  if (entries.length === 0) return;
  // The turn's memories in one write where the memory worker takes several at once.
  const calls = registered.has("memory::store_many")
    ? [{ function_id: "memory::store_many", payload: { agentId: agent.id, entries }, ...asService }]
    : entries.map((entry) => ({
        function_id: "memory::store",
        payload: { agentId: agent.id, ...entry },
        ...asService,
      }));
  await Promise.all(calls.map((call) => deps.trigger(call).catch(() => undefined)));
}
