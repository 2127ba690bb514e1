import type { z } from "zod";
import { isConflict } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import { encodeCursor } from "../../engine/state/keys.ts";
import type { BatchOp } from "../../engine/state/types.ts";
import { nowIso } from "../../shared/clock.ts";
import { notFound } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import type { sessionRecord, storedMessage } from "./schema.ts";

export const AGENTS_SCOPE = "agents";
const sessionsScope = (agentId: string) => `agent_sessions:${agentId}`;
const messagesScope = (agentId: string, sessionId: string) => `agent_messages:${agentId}:${sessionId}`;

export type Session = z.infer<typeof sessionRecord>;
export type StoredMessage = z.infer<typeof storedMessage>;

/** Every agent of every realm (admin listings; a realm's own agents are read through its index). */
export async function listSessions(state: StateClient, agentId: string): Promise<Session[]> {
  const sessions: Session[] = [];
  for await (const record of state.scan<Session>(sessionsScope(agentId))) sessions.push(record.value);
  return sessions.sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : -1));
}

export async function openSession(
  state: StateClient,
  agentId: string,
  sessionId: string | undefined,
  firstMessage: string,
): Promise<Session> {
  if (sessionId) {
    const existing = await getSession(state, agentId, sessionId);
    if (existing) return existing;
    // An id of the service's own form names a session it made: missing, it is a typo or another agent's,
    // not a new conversation. Any other id is the caller's own key, started on first use.
    if (GENERATED_SESSION_ID.test(sessionId)) {
      throw notFound(
        `Session ${sessionId} not found for agent ${agentId}: GET /api/agents/${agentId}/sessions lists them; omit sessionId to start a new one`,
      );
    }
  }
  const now = nowIso();
  const session: Session = {
    id: sessionId ?? newId("session"),
    agentId,
    title: firstMessage.slice(0, 80),
    messageCount: 0,
    createdAt: now,
    updatedAt: now,
    metadata: {},
  };
  // Written with the turn's messages (appendTurn), in one transaction: a turn that fails or is given up
  // leaves no empty session behind, and a new conversation costs one commit instead of three.
  unsaved.add(session);
  return session;
}

/** Sessions opened for a turn and not yet written (see openSession). */
const unsaved = new WeakSet<Session>();

/** The agent's `/v1` conversations by the hash of their messages so far (see threads.ts). */
export const threadsScope = (agentId: string) => `agent_threads:${agentId}`;

const GENERATED_SESSION_ID = /^session-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const sequenceKey = (n: number) => String(n).padStart(10, "0");

export async function getSession(
  state: StateClient,
  agentId: string,
  sessionId: string,
): Promise<Session | null> {
  return state.get<Session>(sessionsScope(agentId), sessionId);
}

/** A page of the session's messages, oldest first; the cursor is the state list's. */
export async function sessionMessages(
  state: StateClient,
  agentId: string,
  sessionId: string,
  page: { limit: number; cursor?: string },
): Promise<{ messages: StoredMessage[]; nextCursor: string | null }> {
  const listed = await state.list<StoredMessage>(messagesScope(agentId, sessionId), page);
  return { messages: listed.items.map((item) => item.value), nextCursor: listed.nextCursor };
}

/**
 * The last `limit` messages, oldest first. Keys are sequence numbers, so the read starts right at the
 * first wanted one (a cursor after the key before it) instead of walking the whole session.
 */
export async function recentMessages(
  state: StateClient,
  agentId: string,
  session: Session,
  limit: number,
): Promise<StoredMessage[]> {
  if (session.messageCount === 0) return [];
  const from = Math.max(0, session.messageCount - limit);
  const page = await state.list<StoredMessage>(messagesScope(agentId, session.id), {
    limit: Math.min(limit, 1000),
    cursor: from > 0 ? encodeCursor(sequenceKey(from - 1)) : undefined,
  });
  return page.items.map((item) => item.value);
}

/** Appends the turn; message keys are zero-padded sequence numbers, so key order is time order. */
export async function appendTurn(
  state: StateClient,
  session: Session,
  turn: StoredMessage[],
): Promise<Session> {
  if (unsaved.delete(session)) {
    const created: Session = { ...session, messageCount: turn.length, updatedAt: nowIso() };
    try {
      await state.batch([
        {
          type: "set",
          scope: sessionsScope(session.agentId),
          key: session.id,
          value: created,
          expectedVersion: 0,
        },
        ...messageOps(session, 0, turn),
      ]);
      return created;
    } catch (error) {
      // A caller's own session id, started by another turn meanwhile: appended to it below instead.
      if (!isConflict(error)) throw error;
    }
  }
  // Sequence numbers are reserved with one atomic increment of the session's count, so two turns on one
  // session at once get distinct keys and lose nothing.
  const { new_value: updated } = await state.update<Session>(sessionsScope(session.agentId), session.id, [
    { type: "increment", path: "messageCount", by: turn.length },
    { type: "set", path: "updatedAt", value: nowIso() },
  ]);
  const first = updated.messageCount - turn.length;
  await state.batch(messageOps(session, first, turn));
  return updated;
}

/**
 * The turn's messages as writes under their sequence numbers, from `first` on: create-only, since a
 * reserved number is free (a message already there would be a bug to report, not a record to overwrite).
 */
function messageOps(session: Session, first: number, turn: StoredMessage[]): BatchOp[] {
  return turn.map((message, offset) => ({
    type: "set",
    scope: messagesScope(session.agentId, session.id),
    key: sequenceKey(first + offset),
    value: message,
    expectedVersion: 0,
  }));
}

/** Every record of the agent: its sessions and their messages, then the agent itself. */
export async function deleteAgentData(state: StateClient, agentId: string): Promise<void> {
  const threads = threadsScope(agentId);
  for await (const record of state.scan(threads)) await state.delete(threads, record.key);
  for (const session of await listSessions(state, agentId)) {
    const scope = messagesScope(agentId, session.id);
    for await (const record of state.scan(scope)) await state.delete(scope, record.key);
    await state.delete(sessionsScope(agentId), session.id);
  }
  await state.delete(AGENTS_SCOPE, agentId);
}
