import { isConflict } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import { nowIso } from "../../shared/clock.ts";
import { AppError, conflict } from "../../shared/errors.ts";
import { onceUntilDone } from "../../shared/once.ts";
import { endedBefore, mayBeOlderThan, yieldToOthers } from "../../shared/retention.ts";
import { type BroadcastInput, MAX_MESSAGES, type Swarm, type SwarmMessage } from "./schema.ts";

export const SWARMS_SCOPE = "swarms";
/**
 * Swarms still active, by id: what the expiry sweep read before DUE_SCOPE. Only a store written before
 * it holds entries here; the backfill moves them to DUE_SCOPE.
 */
export const ACTIVE_SCOPE = "swarms_active";
/**
 * Swarms still active, keyed by when they expire, soonest first: the sweep each second reads only the
 * ones that are due and stops at the first that is not (all active swarms of every realm, each second,
 * was one realm's thousands of month-long swarms costing the whole service).
 */
export const DUE_SCOPE = "swarms_due";
/** A realm's swarms by id: what listing and purging a realm read (never the other realms' swarms). */
export const realmSwarmsScope = (realmId: string) => `swarms_realm:${realmId}`;
const META_SCOPE = "swarms_meta";
const BACKFILL_MARKER = "index_v1";

export interface DueEntry {
  swarmId: string;
  expiresAt: string;
}

/** A swarm's place in DUE_SCOPE: its expiry (epoch ms, fixed width, so keys sort by time), then its id. */
export const dueKey = (swarm: Pick<Swarm, "swarmId" | "expiresAt">) =>
  `${String(Date.parse(swarm.expiresAt)).padStart(15, "0")}:${swarm.swarmId}`;

/** A new swarm with its entries in its realm's index and the expiry index, in one transaction. */
export async function storeNewSwarm(state: StateClient, swarm: Swarm): Promise<void> {
  const due: DueEntry = { swarmId: swarm.swarmId, expiresAt: swarm.expiresAt };
  await state.batch([
    { type: "set", scope: SWARMS_SCOPE, key: swarm.swarmId, value: swarm, expectedVersion: 0 },
    {
      type: "set",
      scope: realmSwarmsScope(swarm.realmId),
      key: swarm.swarmId,
      value: { swarmId: swarm.swarmId },
    },
    ...(swarm.status === "active"
      ? [{ type: "set" as const, scope: DUE_SCOPE, key: dueKey(swarm), value: due }]
      : []),
  ]);
}

/** The ids of a realm's swarms. */
export async function realmSwarmIds(state: StateClient, realmId: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const { key } of state.scan(realmSwarmsScope(realmId))) ids.push(key);
  return ids;
}

/**
 * The realm and expiry indexes for swarms made before them: every swarm is indexed under its realm and
 * every active one by its expiry, once per store (a marker records it); idempotent, so a run cut short
 * is simply run again.
 */
export async function backfillIndexes(state: StateClient): Promise<void> {
  if (await state.get(META_SCOPE, BACKFILL_MARKER)) return;
  for await (const { value: swarm } of state.scan<Swarm>(SWARMS_SCOPE)) {
    await state.set(realmSwarmsScope(swarm.realmId), swarm.swarmId, { swarmId: swarm.swarmId });
    if (swarm.status === "active") {
      const due: DueEntry = { swarmId: swarm.swarmId, expiresAt: swarm.expiresAt };
      await state.set(DUE_SCOPE, dueKey(swarm), due);
    }
  }
  const legacy: string[] = [];
  for await (const { key } of state.scan(ACTIVE_SCOPE)) legacy.push(key);
  for (const key of legacy) await state.delete(ACTIVE_SCOPE, key);
  await state.set(META_SCOPE, BACKFILL_MARKER, { doneAt: nowIso() });
}

/** The backfill, run once and awaited by whatever reads the indexes; a failed run is tried again. */
export function onceBackfilled(state: StateClient): () => Promise<void> {
  return onceUntilDone(() => backfillIndexes(state));
}
const messagesScope = (swarmId: string) => `swarm_messages:${swarmId}`;
const seqKey = (seq: number) => String(seq).padStart(6, "0");

export async function messagesOf(state: StateClient, swarmId: string): Promise<SwarmMessage[]> {
  const messages: SwarmMessage[] = [];
  for await (const { value } of state.scan<SwarmMessage>(messagesScope(swarmId))) messages.push(value);
  return messages;
}

/**
 * Appends one message: the swarm's count and the message in one transaction, conditional on the swarm
 * record read, so messages get consecutive numbers, the 500 cap holds under concurrency, and nothing
 * lands after the swarm ended.
 */
export async function appendMessage(state: StateClient, input: BroadcastInput): Promise<SwarmMessage> {
  for (let attempt = 0; attempt < 64; attempt++) {
    const found = await state.getVersioned<Swarm>(SWARMS_SCOPE, input.swarmId);
    if (!found) throw new AppError("not_found", `Swarm ${input.swarmId} not found`);
    const swarm = found.value;
    if (swarm.status !== "active")
      throw conflict(`Swarm ${swarm.swarmId} is ${swarm.status}: it takes no messages`);
    if (swarm.messageCount >= MAX_MESSAGES) {
      throw conflict(
        `Swarm ${swarm.swarmId} holds its ${MAX_MESSAGES} messages: dissolve it or start another`,
      );
    }
    const seq = swarm.messageCount + 1;
    const message: SwarmMessage = {
      seq,
      agentId: input.agentId,
      message: input.message,
      type: input.type,
      ...(input.vote ? { vote: input.vote } : {}),
      at: nowIso(),
    };
    try {
      await state.batch([
        {
          type: "set",
          scope: SWARMS_SCOPE,
          key: swarm.swarmId,
          value: { ...swarm, messageCount: seq },
          expectedVersion: found.version,
        },
        {
          type: "set",
          scope: messagesScope(swarm.swarmId),
          key: seqKey(seq),
          value: message,
          expectedVersion: 0,
        },
      ]);
      return message;
    } catch (error) {
      if (!isConflict(error)) throw error;
    }
  }
  throw new AppError("unavailable", `Too many concurrent messages to swarm ${input.swarmId}; try again`);
}

/** A swarm, its messages and its index entries (a realm delete). */
export async function purgeSwarm(state: StateClient, realmId: string, swarmId: string): Promise<void> {
  const swarm = await state.get<Swarm>(SWARMS_SCOPE, swarmId);
  if (swarm) await state.delete(DUE_SCOPE, dueKey(swarm));
  await state.delete(ACTIVE_SCOPE, swarmId);
  // The record before its messages: a message is written only with the record's version (appendMessage),
  // so a broadcast racing the purge cannot leave one behind.
  await state.delete(SWARMS_SCOPE, swarmId);
  await dropMessagesAndIndex(state, realmId, swarmId);
}

/** What is left of a swarm once its record is gone. The realm's index entry goes last, so a delete cut short is found and finished by a realm purge. */
async function dropMessagesAndIndex(state: StateClient, realmId: string, swarmId: string): Promise<void> {
  const keys: string[] = [];
  for await (const { key } of state.scan(messagesScope(swarmId))) keys.push(key);
  for (const key of keys) await state.delete(messagesScope(swarmId), key);
  await state.delete(realmSwarmsScope(realmId), swarmId);
}

/** A swarm the retention may delete: ended (dissolved or expired) before the cutoff; an active one never. */
export function isExpiredSwarm(swarm: Pick<Swarm, "status" | "endedAt">, cutoff: number): boolean {
  return swarm.status !== "active" && endedBefore(swarm.endedAt, cutoff);
}

/**
 * Deletes the swarms of every realm that ended before `cutoff` (each realm's by the same rule), with
 * their messages and index entries; returns how many. Only the swarms made before the cutoff are read.
 */
export async function sweepSwarms(state: StateClient, cutoff: number, now: number): Promise<number> {
  let deleted = 0;
  for await (const { value: swarm, version } of mayBeOlderThan<Swarm>(
    state,
    SWARMS_SCOPE,
    "swm",
    cutoff,
    now,
  )) {
    if (!isExpiredSwarm(swarm, cutoff)) continue;
    try {
      // Conditional on the version read: an ended swarm never changes, so a conflict is a purge under way.
      await state.batch([
        { type: "delete", scope: SWARMS_SCOPE, key: swarm.swarmId, expectedVersion: version },
        { type: "delete", scope: DUE_SCOPE, key: dueKey(swarm) },
      ]);
    } catch (error) {
      if (isConflict(error)) continue;
      throw error;
    }
    await dropMessagesAndIndex(state, swarm.realmId, swarm.swarmId);
    deleted++;
    await yieldToOthers();
  }
  return deleted;
}

export function isDue(swarm: Swarm, now: number): boolean {
  return swarm.status === "active" && Date.parse(swarm.expiresAt) <= now;
}
