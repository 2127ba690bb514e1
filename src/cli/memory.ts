import type { EmbeddingStatus } from "../shared/embedding-status.ts";
import { agentIdOf, allAgents } from "./agents.ts";
import { api, output } from "./api.ts";

const POLL_MS = 500;
const BAR_WIDTH = 30;

const statusPath = (agentId: string) => `/api/agents/${encodeURIComponent(agentId)}/memory/embeddings`;

/** `[#####·····]  350/1000 embedded (35 %)`, with the last failure when the queue is retrying. */
export function progressLine(
  label: string,
  embedded: number,
  entries: number,
  lastError: string | null,
): string {
  const share = entries === 0 ? 1 : embedded / entries;
  const filled = Math.round(share * BAR_WIDTH);
  const bar = `[${"#".repeat(filled)}${"·".repeat(BAR_WIDTH - filled)}]`;
  const retrying = lastError ? `  (retrying: ${lastError.slice(0, 120)})` : "";
  return `${label} ${bar} ${embedded}/${entries} embedded (${Math.floor(share * 100)} %)${retrying}`;
}

/**
 * `agentos memory backfill [agent]`: embeds the memories of an agent (id or name), or of every agent
 * with an embedding model, that have no vector yet, and shows the progress until nothing is pending.
 * The service does the work in the background (a stopped command loses nothing: the agents stay marked).
 */
export async function memoryBackfill(ref: string | undefined, options: { json?: boolean }): Promise<void> {
  const ids = ref ? [await agentIdOf(ref)] : (await allAgents()).map((agent) => agent.id);
  const started: EmbeddingStatus[] = [];
  for (const id of ids) started.push(await api<EmbeddingStatus>("POST", statusPath(id)));
  const embedding = started.filter((status) => status.model !== null);
  if (ref && embedding.length === 0) {
    throw new Error(
      `agent ${ref} has no embedding model: set its embeddingModel (agents update, or PATCH /api/agents/:id) or AGENTOS_EMBEDDING_MODEL`,
    );
  }
  const live = process.stdout.isTTY && !options.json;
  let statuses = embedding;
  let shown = "";
  while (statuses.some((status) => status.pending > 0)) {
    const line = summary(statuses);
    if (live) process.stdout.write(`\r${line}\u001b[K`);
    else if (line !== shown && !options.json) process.stdout.write(`${line}\n`);
    shown = line;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    statuses = await Promise.all(
      statuses.map((status) => api<EmbeddingStatus>("GET", statusPath(status.agentId))),
    );
  }
  if (live) process.stdout.write("\r\u001b[K");
  output(options.json, statuses, () =>
    statuses.length === 0
      ? "No agent has an embedding model: nothing to embed."
      : statuses
          .map(
            (status) =>
              `${status.agentId}: ${status.embedded}/${status.entries} embedded with ${status.model}`,
          )
          .join("\n"),
  );
}

function summary(statuses: EmbeddingStatus[]): string {
  const embedded = statuses.reduce((sum, status) => sum + status.embedded, 0);
  const entries = statuses.reduce((sum, status) => sum + status.entries, 0);
  const failing = statuses.find((status) => status.lastError !== null && status.pending > 0);
  const label =
    statuses.length === 1 ? (statuses[0] as EmbeddingStatus).agentId : `${statuses.length} agents`;
  return progressLine(label, embedded, entries, failing?.lastError ?? null);
}
