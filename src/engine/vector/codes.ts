import { CodeMemory } from "./code-memory.ts";
import { type CodeSource, codeWords } from "./scan.ts";

/** Where the database stands for a scope: writes and deletes so far (both only grow). */
export interface ScopeVersion {
  version: number;
  deletes: number;
}

/** A stored row as the code set needs it: `ref` is the backend's key for the int8 vector (a rowid). */
export interface CodeRow {
  id: string;
  ref: number;
  code: Uint8Array;
}

/**
 * One scope's sign codes for one model, in memory: a query scans them all, so they sit packed in one
 * Uint32Array (slot i at i × words); a delete moves the last slot into the hole. `version`/`deletes`
 * are the scope's counters this copy matches: a scope whose version moved on has rows with seq above
 * it to fetch; one whose deletes moved on is reloaded whole (deleted rows leave nothing to fetch).
 */
export class CodeSet implements CodeSource {
  readonly model: string;
  readonly dims: number;
  at: ScopeVersion;
  readonly words: number;
  count = 0;
  private capacity = 64;
  private readonly memory: CodeMemory;
  ids: string[] = [];
  refs: number[] = [];
  private readonly slots = new Map<string, number>();

  constructor(model: string, dims: number, at: ScopeVersion) {
    this.model = model;
    this.dims = dims;
    this.at = at;
    this.words = codeWords(dims);
    this.memory = new CodeMemory(this.words, this.capacity);
  }

  /** The packed codes (a view that a growth replaces: do not keep it across writes or queries). */
  get codes(): Uint32Array {
    return this.memory.codes;
  }

  /** The `take` slots nearest to a query code by Hamming distance (WebAssembly, see code-memory.ts). */
  nearest(query: Uint32Array, take: number): Int32Array {
    return this.memory.nearest(this.count, query, take);
  }

  asymmetricScores(unit: Float32Array, slots: Int32Array): Float32Array {
    return this.memory.asymmetricScores(unit, slots);
  }

  has(id: string): boolean {
    return this.slots.has(id);
  }

  upsert(row: CodeRow): void {
    if (row.code.byteLength !== this.words * 4) throw new Error(`code of ${row.id}: wrong length`);
    let slot = this.slots.get(row.id);
    if (slot === undefined) {
      slot = this.count++;
      if (this.count > this.capacity) {
        this.capacity *= 2;
        this.memory.reserve(this.capacity);
      }
      this.slots.set(row.id, slot);
      this.ids[slot] = row.id;
    }
    this.refs[slot] = row.ref;
    this.codes.set(
      new Uint32Array(row.code.buffer.slice(row.code.byteOffset, row.code.byteOffset + row.code.byteLength)),
      slot * this.words,
    );
  }

  remove(id: string): void {
    const slot = this.slots.get(id);
    if (slot === undefined) return;
    const last = --this.count;
    this.slots.delete(id);
    if (slot !== last) {
      const moved = this.ids[last];
      this.ids[slot] = moved;
      this.refs[slot] = this.refs[last];
      this.slots.set(moved, slot);
      this.codes.copyWithin(slot * this.words, last * this.words, (last + 1) * this.words);
    }
    this.ids.length = last;
    this.refs.length = last;
  }

  /** Rough memory held: the WebAssembly memory (codes and scratch) plus about 100 bytes per id (string, map entry, ref). */
  bytes(): number {
    return this.memory.bytes + this.count * 100;
  }
}

/**
 * The code sets of a process, per (index, scope, model), least recently used dropped first once they
 * hold more than `maxBytes` (a dropped set is loaded again by its next query).
 */
export class CodeCache {
  private readonly sets = new Map<string, CodeSet>();
  private readonly maxBytes: number;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  static key(index: string, scope: string, model: string): string {
    return `${index}\u0000${scope}\u0000${model}`;
  }

  get(key: string): CodeSet | undefined {
    const set = this.sets.get(key);
    if (set) {
      this.sets.delete(key);
      this.sets.set(key, set);
    }
    return set;
  }

  set(key: string, set: CodeSet): void {
    this.sets.delete(key);
    this.sets.set(key, set);
    let total = 0;
    for (const held of this.sets.values()) total += held.bytes();
    for (const [oldest, held] of this.sets) {
      if (total <= this.maxBytes || oldest === key) break;
      total -= held.bytes();
      this.sets.delete(oldest);
    }
  }

  /** The cached sets of a scope, every model (a delete by id or of the scope touches them all). */
  ofScope(index: string, scope: string): CodeSet[] {
    const prefix = `${index}\u0000${scope}\u0000`;
    return [...this.sets].filter(([key]) => key.startsWith(prefix)).map(([, set]) => set);
  }

  dropScope(index: string, scope: string): void {
    const prefix = `${index}\u0000${scope}\u0000`;
    for (const key of [...this.sets.keys()]) if (key.startsWith(prefix)) this.sets.delete(key);
  }

  clear(): void {
    this.sets.clear();
  }
}

/** Default budget for a process's code sets: 100 000 × 1536 dims take about 30 MB. */
export const DEFAULT_CACHE_BYTES = 512 * 1024 * 1024;

/** What a query must do to bring a cached set (or none) up to the database's counters. */
export function refreshPlan(set: CodeSet | undefined, at: ScopeVersion): "current" | "since" | "load" {
  if (!set || set.at.deletes !== at.deletes) return "load";
  return set.at.version === at.version ? "current" : "since";
}

/**
 * After a write of this process that moved the scope to `after`: each cached set of the scope that
 * stood exactly one write before it takes the change (`apply`, for sets of the written model) and the
 * new counters; any other set is left behind, and its next query catches up from the database.
 */
export function followWrite(
  sets: CodeSet[],
  after: ScopeVersion,
  deleted: boolean,
  apply: (set: CodeSet) => void,
): void {
  for (const set of sets) {
    if (set.at.version !== after.version - 1 || set.at.deletes !== after.deletes - (deleted ? 1 : 0))
      continue;
    apply(set);
    set.at = after;
  }
}
