import type { SearchClient } from "../../engine/search/client.ts";
import { conflict } from "../../shared/errors.ts";
import { MEMORY_INDEX } from "./schema.ts";

/** Agents whose entry count is kept (all are forgotten, and counted again when next stored, when more are). */
const MAX_COUNTED_AGENTS = 10_000;

export interface EntryCapOptions {
  /** AGENTOS_MEMORY_MAX_ENTRIES_PER_AGENT. */
  max: number;
  /**
   * Cluster mode: other nodes store too, so the index's count is read at each store (PostgreSQL keeps
   * it per scope: one indexed row, no scan). Otherwise this process is the only one storing, and the
   * count is read once per agent and kept (SQLite counts a scope by reading it: 1 M entries take long).
   */
  shared: boolean;
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
 * Alone (SQLite), the agent's entries are counted once and kept here: checked and taken in one step,
 * stores made at once never pass the cap together. In a cluster (PostgreSQL) the index's count is read
 * at each store, and to it are added this node's stores under way and those written since the count
 * was asked for (which it may not include): stores at once on one node never pass the cap either
 * (they may be refused a little early, a write counted twice); stores at once on other nodes can pass
 * it by at most their own entries (100 at most each), since each node counts before it writes.
 */
export class EntryCap {
  private readonly search: SearchClient;
  private readonly options: EntryCapOptions;
  /** Alone: per agent, its entries as counted plus those stored or reserved here since. */
  private readonly counts = new Map<string, { entries: number }>();
  private readonly counting = new Map<string, Promise<{ entries: number }>>();
  /** In a cluster: per agent, its stores here under way or written while a count was being asked. */
  private readonly reserved = new Map<string, { stores: Set<Reserved>; asking: Set<number> }>();
  private ticks = 0;

  constructor(search: SearchClient, options: EntryCapOptions) {
    this.search = search;
    this.options = options;
  }

  /** Takes room for `entries` more of the agent's memory, or refuses with 409 naming the cap. */
  reserve(agentId: string, entries: number): Promise<{ done(written: boolean): void }> {
    return this.options.shared ? this.reserveCounted(agentId, entries) : this.reserveKept(agentId, entries);
  }

  /** One entry of the agent's memory was deleted. */
  removed(agentId: string): void {
    const held = this.counts.get(agentId);
    if (held) held.entries = Math.max(0, held.entries - 1);
  }

  /** The agent's memory was deleted as a whole: counted again when next stored. */
  forgotten(agentId: string): void {
    this.counts.delete(agentId);
  }

  private full(agentId: string) {
    return conflict(
      `Agent ${agentId} holds the most memory entries an agent may (${this.options.max}, AGENTOS_MEMORY_MAX_ENTRIES_PER_AGENT): delete some first`,
    );
  }

  private async reserveKept(agentId: string, entries: number) {
    const held = await this.kept(agentId);
    // Checked and taken in one step (no await between), so concurrent stores here see each other.
    if (held.entries + entries > this.options.max) throw this.full(agentId);
    held.entries += entries;
    let settled = false;
    return {
      done: (written: boolean) => {
        if (settled || written || this.counts.get(agentId) !== held) return;
        settled = true;
        held.entries -= entries;
      },
    };
  }

  private async reserveCounted(agentId: string, entries: number) {
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

  /** Drops the written stores every count still asked for includes; the agent once nothing is left. */
  private prune(agentId: string, agent: { stores: Set<Reserved>; asking: Set<number> }): void {
    const oldest = Math.min(...agent.asking);
    for (const store of agent.stores) {
      if (store.writtenAt !== null && store.writtenAt < oldest) agent.stores.delete(store);
    }
    if (agent.stores.size === 0 && agent.asking.size === 0) this.reserved.delete(agentId);
  }

  /** The agent's entries as counted once (one count whoever asks meanwhile) and kept up to date since. */
  private async kept(agentId: string): Promise<{ entries: number }> {
    const known = this.counts.get(agentId);
    if (known) return known;
    let pending = this.counting.get(agentId);
    if (!pending) {
      pending = this.search
        .count(MEMORY_INDEX, agentId)
        .then((entries) => this.keep(agentId, { entries }))
        .finally(() => this.counting.delete(agentId));
      this.counting.set(agentId, pending);
    }
    await pending;
    // Forgotten meanwhile (the agent's memory deleted): counted again.
    return this.counts.get(agentId) ?? this.kept(agentId);
  }

  private keep(agentId: string, held: { entries: number }): { entries: number } {
    if (this.counts.size >= MAX_COUNTED_AGENTS) this.counts.clear();
    this.counts.set(agentId, held);
    return held;
  }
}
