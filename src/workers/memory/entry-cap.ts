import type { SearchClient } from "../../engine/search/client.ts";
import { conflict } from "../../shared/errors.ts";
import { MEMORY_INDEX } from "./schema.ts";

export interface EntryCapOptions {
  /** AGENTOS_MEMORY_MAX_ENTRIES_PER_AGENT. */
  max: number;
}

/** A store's room: its entries, and when (on the `ticks` clock) they were written; null while they are not. */
interface Reserved {
  entries: number;
  writtenAt: number | null;
}

/**
 * The cap on one agent's memory entries (each entry's size is bounded by the schema, so this bounds
 * the disk a tenant's agent fills, whoever stores: a realm key, the agent's tools, or the service's
 * own turn writes, which a tenant's messages drive). A store takes its entries from the agent's room
 * before it writes (`reserve`) and says after whether it wrote them (`done`).
 *
 * The index's count is read at each store: both backends keep it per scope (one indexed row, no scan),
 * and it includes what other writers stored: other nodes of a cluster, or a CLI process on the embedded
 * SQLite file (a count kept here would miss those until the next restart). To it are added this
 * process's stores under way and those written since the count was asked for (which it may not
 * include): stores at once here never pass the cap (they may be refused a little early, a write counted
 * twice); stores at once in other processes can pass it by at most their own entries (100 at most
 * each), since each counts before it writes.
 */
export class EntryCap {
  private readonly search: SearchClient;
  private readonly options: EntryCapOptions;
  /** Per agent, its stores here under way or written while a count was being asked. */
  private readonly reserved = new Map<string, { stores: Set<Reserved>; asking: Set<number> }>();
  private ticks = 0;

  constructor(search: SearchClient, options: EntryCapOptions) {
    this.search = search;
    this.options = options;
  }

  /** Takes room for `entries` more of the agent's memory, or refuses with 409 naming the cap. */
  async reserve(agentId: string, entries: number): Promise<{ done(written: boolean): void }> {
    const agent = this.reserved.get(agentId) ?? { stores: new Set<Reserved>(), asking: new Set<number>() };
    this.reserved.set(agentId, agent);
    const asked = ++this.ticks;
    agent.asking.add(asked);
    let counted: number;
    try {
      counted = await this.search.count(MEMORY_INDEX, agentId);
    } catch (error) {
      agent.asking.delete(asked);
      this.prune(agentId, agent);
      throw error;
    }
    agent.asking.delete(asked);
    let held = 0;
    for (const store of agent.stores)
      if (store.writtenAt === null || store.writtenAt > asked) held += store.entries;
    if (counted + held + entries > this.options.max) {
      this.prune(agentId, agent);
      throw this.full(agentId);
    }
    const store: Reserved = { entries, writtenAt: null };
    agent.stores.add(store);
    return {
      done: (written: boolean) => {
        if (written) store.writtenAt = ++this.ticks;
        else agent.stores.delete(store);
        this.prune(agentId, agent);
      },
    };
  }

  private full(agentId: string) {
    return conflict(
      `Agent ${agentId} holds the most memory entries an agent may (${this.options.max}, AGENTOS_MEMORY_MAX_ENTRIES_PER_AGENT): delete some first`,
    );
  }

  /** Drops the written stores every count still asked for includes; the agent once nothing is left. */
  private prune(agentId: string, agent: { stores: Set<Reserved>; asking: Set<number> }): void {
    const oldest = Math.min(...agent.asking);
    for (const store of agent.stores) {
      if (store.writtenAt !== null && store.writtenAt < oldest) agent.stores.delete(store);
    }
    if (agent.stores.size === 0 && agent.asking.size === 0) this.reserved.delete(agentId);
  }
}
