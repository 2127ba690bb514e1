import { isConflict } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import { nowIso } from "../../shared/clock.ts";
import { AppError, conflict } from "../../shared/errors.ts";
import { type BroadcastInput, MAX_MESSAGES, type Swarm, type SwarmMessage } from "./schema.ts";

export const SWARMS_SCOPE = "swarms";
/** Swarms still active, by id: what the expiry sweep reads (never every swarm ever made). */
export const ACTIVE_SCOPE = "swarms_active";
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

/** A swarm and its messages (a realm delete). */
export async function purgeSwarm(state: StateClient, swarmId: string): Promise<void> {
  const keys: string[] = [];
  for await (const { key } of state.scan(messagesScope(swarmId))) keys.push(key);
  for (const key of keys) await state.delete(messagesScope(swarmId), key);
  await state.delete(ACTIVE_SCOPE, swarmId);
  await state.delete(SWARMS_SCOPE, swarmId);
}

export function isDue(swarm: Swarm, now: number): boolean {
  return swarm.status === "active" && Date.parse(swarm.expiresAt) <= now;
}
