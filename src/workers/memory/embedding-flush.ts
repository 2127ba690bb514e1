import type { SearchClient } from "../../engine/search/client.ts";
import type { StateClient } from "../../engine/state/client.ts";
import type { TriggerFn } from "../../engine/types.ts";
import type { VectorClient } from "../../engine/vector/client.ts";
import { embed } from "../../llm/embeddings/embed.ts";
import { nowMs } from "../../shared/clock.ts";
import type { AgentEmbeddings, EmbeddingTarget } from "./agent-embedding.ts";
import { claimScan, clearDirty, dropMark, markDirty, readMark } from "./embedding-marks.ts";
import { embedSettling } from "./embedding-refusals.ts";
import { scanMissing } from "./embedding-scan.ts";
import { MEMORY_INDEX } from "./schema.ts";

/** What the queue knows of one agent's pending embeddings in this process. */
export interface AgentWork {
  /** Entries known to be without a vector: id → content (stored here, or found by a scan). */
  texts: Map<string, string>;
  /** A pass over the agent's memory is due or under way (restart, model change, backfill, counts off). */
  scan: boolean;
  /** Where the pass goes on (undefined: from the newest entry). */
  cursor: string | undefined;
  /** Entries the current pass found missing so far. */
  passFound: number;
  /**
   * A pass over the whole memory ended (a model change, a restart, a backfill): once the memory is
   * covered, vectors of other models are deleted (a re-embedding done).
   */
  swept?: boolean;
}

export interface FlushDeps {
  trigger: TriggerFn;
  env: NodeJS.ProcessEnv;
  state: StateClient;
  search: SearchClient;
  vectors: VectorClient;
  targets: AgentEmbeddings;
  /** Entries per embed call. */
  batchSize: number;
  /** Cluster mode: this node's name, for the scan lease (see claimScan); unset: no lease (one process). */
  node?: string;
  /** The queue stopping: the request in flight is abandoned. */
  signal: AbortSignal;
}

/**
 * `more`: work is left, go on at once; `done`: the agent has nothing missing (its mark is cleared);
 * `later`: another node is passing over its memory, look again at `at`.
 */
export type FlushResult = {
  next: "more" | "done" | "later";
  embedded: number;
  /** Entries the provider refused (marked: never sent again, see embedding-refusals.ts). */
  refused?: { count: number; reason: string };
  at?: number;
};

/** How long a node's pass keeps the others away without renewing it (each batch renews it). */
export const SCAN_LEASE_MS = 60_000;

/** Per embed request; the queue's own backoff does the retrying. */
const EMBED_TIMEOUT_MS = 30_000;

export function newWork(): AgentWork {
  return { texts: new Map(), scan: false, cursor: undefined, passFound: 0 };
}

/** Starts a pass over the agent's memory from its newest entry (`true`), or ends the one under way. */
export function setPass(work: AgentWork, scan: boolean): void {
  Object.assign(work, { scan, cursor: undefined, passFound: 0 });
}

/**
 * One batch of an agent's embeddings: the model as the agent says now (another than the mark's starts a
 * pass for it: re-embedding), up to `batchSize` entries (those known, then those a pass finds), one
 * embed call charged to the agent's realm, the vectors stored. With nothing left, the counts decide:
 * as many vectors as entries (or a whole pass that found nothing) clears the agent's mark, unless a
 * store set it again meanwhile; fewer start another pass (entries another node stored). Throws what
 * failed (the provider, a refusal, storage): the entries stay pending and the queue retries.
 */
export async function flushAgent(deps: FlushDeps, agentId: string, work: AgentWork): Promise<FlushResult> {
  const target = await deps.targets.fresh(agentId);
  if (!target) {
    // No model (or no agent): nothing is embedded, and nothing is pending.
    Object.assign(work, newWork());
    await dropMark(deps.state, agentId);
    return { next: "done", embedded: 0 };
  }
  let mark = await readMark(deps.state, agentId);
  if (!mark || mark.model !== target.key) {
    ({ mark } = await markDirty(deps.state, agentId, target.key));
    setPass(work, true);
  }
  let passEmpty = false;
  let waitUntil: number | undefined;
  if (work.scan && deps.node) {
    const lease = await claimScan(deps.state, agentId, deps.node, nowMs(), SCAN_LEASE_MS);
    if (!lease.ok) {
      // Another node passes over this memory: embed only what was stored here, and look again later.
      setPass(work, false);
      waitUntil = lease.until;
    }
  }
  if (work.texts.size < deps.batchSize && work.scan) {
    const step = await scanMissing(
      deps,
      agentId,
      target.key,
      deps.batchSize - work.texts.size,
      work.cursor,
      new Set(work.texts.keys()),
    );
    for (const { id, content } of step.found) work.texts.set(id, content);
    work.passFound += step.found.length;
    work.cursor = step.cursor ?? undefined;
    if (step.cursor === null) {
      passEmpty = work.passFound === 0;
      work.swept = true;
      setPass(work, false);
    }
  }
  const batch = [...work.texts].slice(0, deps.batchSize).map(([id, content]) => ({ id, content }));
  const done: BatchDone =
    batch.length > 0 ? await embedBatch(deps, target, batch) : { embedded: 0, left: new Set() };
  const { embedded, refused } = done;
  for (const { id } of batch) if (!done.left.has(id)) work.texts.delete(id);
  if (work.texts.size > 0 || work.scan) return { next: "more", embedded, refused };
  if (waitUntil !== undefined) return { next: "later", embedded, refused, at: waitUntil };

  const [entries, vectors] = await Promise.all([
    deps.search.count(MEMORY_INDEX, agentId),
    deps.vectors.counts(MEMORY_INDEX, agentId, target.key),
  ]);
  // Refused entries will never have a vector: they count as covered, or the mark would stay for good.
  if (vectors.count + vectors.refused >= entries || passEmpty) {
    // The model covers the memory after a whole pass: vectors of models it had before can go.
    if (work.swept) await deps.vectors.deleteOtherModels(MEMORY_INDEX, agentId, target.key);
    work.swept = false;
    await clearDirty(deps.state, agentId, target.key, mark.seq);
    return { next: "done", embedded, refused };
  }
  setPass(work, true);
  return { next: "more", embedded, refused };
}

interface BatchDone {
  embedded: number;
  refused?: FlushResult["refused"];
  /** Entries not settled (see embedSettling): they stay pending in this process. */
  left: ReadonlySet<string>;
}

/**
 * Embeds the batch's entries still without a vector (another node may have done some) and stores them;
 * entries the provider refuses on their own are marked refused, and the rest go on without them.
 */
async function embedBatch(
  deps: FlushDeps,
  target: EmbeddingTarget,
  batch: Array<{ id: string; content: string }>,
): Promise<BatchDone> {
  const missing = new Set(
    await deps.vectors.missing(
      MEMORY_INDEX,
      target.agentId,
      target.key,
      batch.map(({ id }) => id),
    ),
  );
  const todo = batch.filter(({ id }) => missing.has(id));
  if (todo.length === 0) return { embedded: 0, left: new Set() };
  const settled = await embedSettling(
    todo,
    ({ content }) => content,
    async (texts) =>
      (
        await embed({
          choice: target.choice,
          // embed() cuts each to the model's input.
          texts,
          trigger: deps.trigger,
          env: deps.env,
          account: target.payer,
          signal: deps.signal,
          timeoutMs: EMBED_TIMEOUT_MS,
          maxRetries: 1,
        })
      ).vectors,
  );
  const stored = settled.embedded.map(({ item }) => item);
  if (stored.length > 0) {
    await deps.vectors.putMany(
      MEMORY_INDEX,
      target.agentId,
      target.key,
      settled.embedded.map(({ item, vector }) => ({ id: item.id, vector })),
    );
  }
  const refused = settled.refused;
  if (refused.length > 0) {
    await deps.vectors.refuse(
      MEMORY_INDEX,
      target.agentId,
      target.key,
      refused.map(({ id }) => id),
    );
  }
  // A refusal is kept where the vectors are, and goes with the entry as they do.
  await dropOrphans(deps, target.agentId, [...stored, ...refused]);
  if (settled.failure !== undefined) throw settled.failure;
  return {
    embedded: stored.length,
    ...(refused.length > 0
      ? { refused: { count: refused.length, reason: messageOf(settled.rejection) } }
      : {}),
    left: new Set(settled.left.map(({ id }) => id)),
  };
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Deletes the vectors just stored whose entries are gone. A delete (of the entry, or of the agent's whole
 * memory) removes the text before the vectors, so one that came while the provider answered either removed
 * these vectors after they were stored or removed the text before this look: either way none is left.
 */
async function dropOrphans(
  deps: FlushDeps,
  agentId: string,
  stored: ReadonlyArray<{ id: string }>,
): Promise<void> {
  if (stored.length === 0) return;
  const kept = new Set(
    (
      await deps.search.get(
        MEMORY_INDEX,
        agentId,
        stored.map(({ id }) => id),
      )
    ).map(({ id }) => id),
  );
  for (const { id } of stored) {
    if (!kept.has(id)) await deps.vectors.delete(MEMORY_INDEX, agentId, id);
  }
}
