import { casUpdate } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import { nowIso } from "../../shared/clock.ts";

/**
 * The embedding queue's durable part: per agent, one record saying whether its memory may have entries
 * without a vector for `model` (`dirty`). Stores set it (before they answer), the queue clears it once
 * the agent has no missing vectors, and a starting process re-scans only the dirty agents. The work
 * itself is never written down: it is derived from the stores (the memory entries that vector::missing
 * reports for the model). `seq` counts the sets, so a clear loses to a store made while it checked.
 */
export const MARKS_SCOPE = "memory_embeddings";

export interface EmbeddingMark {
  dirty: boolean;
  seq: number;
  /** The vector model (`<provider>/<model>`) the agent's memory is embedded with, or is being. */
  model: string;
  updatedAt: string;
  /** Cluster mode: the node passing over the agent's memory, and until when (ms) the others leave it. */
  scanner?: string;
  scanUntil?: number;
}

/**
 * Marks the agent dirty for `model`; answers the mark as written (with its seq) and whether it named
 * another model before (or there was none): then the whole memory needs a pass for the new one.
 */
export async function markDirty(
  state: StateClient,
  agentId: string,
  model: string,
): Promise<{ mark: EmbeddingMark; newModel: boolean }> {
  let newModel = false;
  const { value } = await casUpdate<EmbeddingMark>(state, MARKS_SCOPE, agentId, ({ value }) => {
    newModel = value?.model !== model;
    return { ...value, dirty: true, seq: (value?.seq ?? 0) + 1, model, updatedAt: nowIso() };
  });
  return { mark: value as EmbeddingMark, newModel };
}

/** Clears the mark if nothing set it since `seq` was read (and it still names `model`): true when cleared. */
export async function clearDirty(
  state: StateClient,
  agentId: string,
  model: string,
  seq: number,
): Promise<boolean> {
  const { changed } = await casUpdate<EmbeddingMark>(state, MARKS_SCOPE, agentId, ({ value }) =>
    value?.dirty && value.seq === seq && value.model === model
      ? { dirty: false, seq: value.seq, model: value.model, updatedAt: nowIso() }
      : undefined,
  );
  return changed;
}

/**
 * Cluster mode: the right to pass over the agent's memory (one node at a time embeds what the stores did
 * not queue, so a model change or a restart is paid once). Held `ms` from now, renewed by each batch;
 * `ok: false` with the holder's deadline when another node holds it.
 */
export async function claimScan(
  state: StateClient,
  agentId: string,
  node: string,
  now: number,
  ms: number,
): Promise<{ ok: boolean; until: number }> {
  let held = 0;
  await casUpdate<EmbeddingMark>(state, MARKS_SCOPE, agentId, ({ value }) => {
    if (!value) return undefined;
    if (value.scanner && value.scanner !== node && (value.scanUntil ?? 0) > now) {
      held = value.scanUntil ?? 0;
      return undefined;
    }
    return { ...value, scanner: node, scanUntil: now + ms };
  });
  return held > 0 ? { ok: false, until: held } : { ok: true, until: now + ms };
}

/** Gives the pass up (the node stops): another node may take it at once. */
export async function releaseScan(state: StateClient, agentId: string, node: string): Promise<void> {
  await casUpdate<EmbeddingMark>(state, MARKS_SCOPE, agentId, ({ value }) => {
    if (value?.scanner !== node) return undefined;
    const { scanner: _scanner, scanUntil: _until, ...rest } = value;
    return rest;
  });
}

export const readMark = (state: StateClient, agentId: string) =>
  state.get<EmbeddingMark>(MARKS_SCOPE, agentId);

export async function dropMark(state: StateClient, agentId: string): Promise<void> {
  await state.delete(MARKS_SCOPE, agentId);
}

/**
 * The agents whose marks are dirty: the work a starting process takes up again. `stale`: only those
 * nobody has touched for that long (no store set it, no node holds a pass over it): the sweep's, which
 * leaves agents being embedded where they are.
 */
export async function dirtyAgents(
  state: StateClient,
  stale?: { ms: number; now: number },
): Promise<string[]> {
  const agents: string[] = [];
  for await (const { key, value } of state.scan<EmbeddingMark>(MARKS_SCOPE)) {
    if (!value?.dirty) continue;
    if (stale) {
      const quiet = stale.now - Date.parse(value.updatedAt) >= stale.ms;
      if (!quiet || (value.scanUntil ?? 0) > stale.now) continue;
    }
    agents.push(key);
  }
  return agents;
}
