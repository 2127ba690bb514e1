import type { z } from "zod";
import { isConflict } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import { encodeCursor } from "../../engine/state/keys.ts";
import type { BatchOp } from "../../engine/state/types.ts";
import { nowIso } from "../../shared/clock.ts";
import { notFound } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import {
  decodeCursor as decodePageCursor,
  encodeCursor as encodePageCursor,
  newestFirstKey,
} from "../../shared/pagination.ts";
import type { sessionRecord, storedMessage } from "./schema.ts";

export const AGENTS_SCOPE = "agents";
const sessionsScope = (agentId: string) => `agent_sessions:${agentId}`;
const messagesScope = (agentId: string, sessionId: string) => `agent_messages:${agentId}:${sessionId}`;

export type Session = z.infer<typeof sessionRecord>;
export type StoredMessage = z.infer<typeof storedMessage>;

/** Every session of the agent, in no particular order (a delete; listings read sessionsPage). */
export async function listSessions(state: StateClient, agentId: string): Promise<Session[]> {
  const sessions: Session[] = [];
  for await (const record of state.scan<Session>(sessionsScope(agentId))) sessions.push(record.value);
  return sessions;
}

/**
 * The agent's sessions by their last activity, newest first: `<time counted down>:<sessionId>` →
 * `{sessionId}`, written with each turn's messages (the entry of the session's previous time deleted in
 * the same batch). A page of sessions is then one ranged read and a read of each of its sessions:
 * sorting them all on every request blocked the process 1.7 s per page at 100 000 sessions (every
 * `/v1` conversation is one), for every tenant.
 */
const orderScope = (agentId: string) => `agent_session_order:${agentId}`;
/** Agents whose sessions from before the order existed are in it (see ordered). */
const ORDERED_SCOPE = "agent_session_ordered";

const orderKey = (session: Pick<Session, "id" | "updatedAt">) =>
  newestFirstKey(session.updatedAt, session.id);

interface OrderEntry {
  sessionId: string;
}

const orderEntry = (agentId: string, session: Session): BatchOp => ({
  type: "set",
  scope: orderScope(agentId),
  key: orderKey(session),
  value: { sessionId: session.id } satisfies OrderEntry,
});

/**
 * A page of the agent's sessions, newest activity first. An entry whose session has moved on since
 * (two turns of one session racing can leave the older time's entry behind) or is gone is skipped and
 * deleted; the cursor is the last session's place.
 */
export async function sessionsPage(
  state: StateClient,
  agentId: string,
  request: { limit: number; cursor?: string },
): Promise<{ sessions: Session[]; nextCursor: string | null }> {
  await ordered(state, agentId);
  const scope = orderScope(agentId);
  // Cursors of the earlier listing (pageOf's, a NUL between time and id) name the same place.
  let after =
    request.cursor === undefined ? undefined : decodePageCursor(request.cursor).replace("\u0000", ":");
  const sessions: Session[] = [];
  let last: string | undefined;
  for (;;) {
    const page = await state.list<OrderEntry>(scope, {
      limit: request.limit - sessions.length,
      ...(after === undefined ? {} : { cursor: encodeCursor(after) }),
    });
    const found = await Promise.all(
      page.items.map((item) => getSession(state, agentId, item.value.sessionId)),
    );
    for (const [index, item] of page.items.entries()) {
      const session = found[index];
      if (session && orderKey(session) === item.key) {
        sessions.push(session);
        last = item.key;
      } else {
        await state.delete(scope, item.key, item.version).catch(() => undefined);
      }
    }
    after = page.items[page.items.length - 1]?.key ?? after;
    if (page.nextCursor === null || page.items.length === 0) return { sessions, nextCursor: null };
    if (sessions.length >= request.limit && last !== undefined)
      return { sessions, nextCursor: encodePageCursor(last) };
  }
}

/**
 * Puts the agent's sessions into the order once (a store written before it existed), then marks the
 * agent. A turn meanwhile writes its own entry; one this leaves behind for an older time is skipped.
 */
async function ordered(state: StateClient, agentId: string): Promise<void> {
  if (await state.get(ORDERED_SCOPE, agentId)) return;
  let ops: BatchOp[] = [];
  for await (const { value } of state.scan<Session>(sessionsScope(agentId))) {
    ops.push(orderEntry(agentId, value));
    if (ops.length === 256) {
      await state.batch(ops);
      ops = [];
    }
  }
  if (ops.length > 0) await state.batch(ops);
  await state.set(ORDERED_SCOPE, agentId, { at: nowIso() });
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
        orderEntry(session.agentId, created),
      ]);
      return created;
    } catch (error) {
      // A caller's own session id, started by another turn meanwhile: appended to it below instead.
      if (!isConflict(error)) throw error;
    }
  }
  // Sequence numbers are reserved with one atomic increment of the session's count, so two turns on one
  // session at once get distinct keys and lose nothing.
  const { old_value: before, new_value: updated } = await state.update<Session>(
    sessionsScope(session.agentId),
    session.id,
    [
      { type: "increment", path: "messageCount", by: turn.length },
      { type: "set", path: "updatedAt", value: nowIso() },
    ],
  );
  const first = updated.messageCount - turn.length;
  const moved = before && orderKey(before) !== orderKey(updated);
  await state.batch([
    ...messageOps(session, first, turn),
    orderEntry(session.agentId, updated),
    ...(moved
      ? [{ type: "delete", scope: orderScope(session.agentId), key: orderKey(before) } as const]
      : []),
  ]);
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
  await deleteConversations(state, agentId);
  await state.delete(AGENTS_SCOPE, agentId);
}

/** The agent's `/v1` threads, its sessions and their messages (not the agent's record). */
export async function deleteConversations(state: StateClient, agentId: string): Promise<void> {
  for (const scope of [threadsScope(agentId), orderScope(agentId)]) {
    for await (const record of state.scan(scope)) await state.delete(scope, record.key);
  }
  await state.delete(ORDERED_SCOPE, agentId);
  for (const session of await listSessions(state, agentId)) {
    const scope = messagesScope(agentId, session.id);
    for await (const record of state.scan(scope)) await state.delete(scope, record.key);
    await state.delete(sessionsScope(agentId), session.id);
  }
}
