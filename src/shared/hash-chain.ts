import type { z } from "zod";
import type { StateClient } from "../engine/state/client.ts";
import { nowIso } from "./clock.ts";
import { AppError, badRequest, isAppError } from "./errors.ts";
import {
  type ChainEntry,
  type ChainFields,
  type ChainHead,
  entryHash,
  GENESIS_HASH,
  Walk,
} from "./hash-chain-verify.ts";
import { newId } from "./ids.ts";
import type { chainVerifyResult } from "./outputs.ts";

export {
  type ChainEntry,
  type ChainFields,
  type ChainHead,
  entryHash,
  GENESIS_HASH,
} from "./hash-chain-verify.ts";

/**
 * A tamper-evident, append-only log kept in state: each entry carries the SHA-256 of its
 * predecessor, and a head record `{seq, hash, timestamp}` remembers the last entry so that
 * deletions at the tail are detected too. Several chains may share one scope (one per realm, say);
 * entries live under `<chainId>:<seq, 20 digits>` so a prefix listing returns them in order.
 */

const SEQ_DIGITS = 20;
/** Entries are read in blocks of 100 consecutive seqs: they share a key prefix, so one listing fetches a block. */
const BLOCK_SIZE = 100;
const BLOCK_DIGITS = 2;
const MAX_APPEND_ATTEMPTS = 200;
export const DEFAULT_MAX_SCAN = 5000;

const RESERVED = ["seq", "id", "timestamp", "prevHash", "hash"] as const;

export interface ChainLocation {
  /** Scope holding the entries. */
  scope: string;
  /** Scope holding the head; its key is `headKey`, default `chainId`. */
  headScope: string;
  headKey?: string;
  /** Names one chain among those sharing `scope`; must not contain ":". */
  chainId: string;
}

export type VerifyResult = z.infer<typeof chainVerifyResult>;

export interface ReadOptions<F extends ChainFields> {
  /** "desc" (default): newest first. */
  order?: "asc" | "desc";
  limit?: number;
  /** A `nextCursor` from a previous read with the same order. */
  cursor?: string;
  /** Inclusive ISO timestamp bounds; reading stops as soon as it passes them. */
  since?: string;
  until?: string;
  filter?: (entry: ChainEntry<F>) => boolean;
  /** Most seqs examined per call, so a rare filter cannot walk the whole log in one request. */
  maxScan?: number;
}

export interface ReadPage<F extends ChainFields> {
  entries: ChainEntry<F>[];
  /** Null when the listing is complete; a page may hold fewer than `limit` entries and still have one. */
  nextCursor: string | null;
}

const isConflict = (error: unknown) => isAppError(error) && error.code === "conflict";
const pad = (seq: number) => String(seq).padStart(SEQ_DIGITS, "0");
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class HashChain<F extends ChainFields = ChainFields> {
  private readonly state: StateClient;
  private readonly location: ChainLocation;
  private readonly prefix: string;
  private readonly headKey: string;

  constructor(state: StateClient, location: ChainLocation) {
    // A ":" would let one chain's prefix cover another chain's keys ("a:" would match "a:b:…").
    if (location.chainId === "" || location.chainId.includes(":")) {
      throw badRequest(`chainId must be non-empty and must not contain ":" (got "${location.chainId}")`);
    }
    this.state = state;
    this.location = location;
    this.prefix = `${location.chainId}:`;
    this.headKey = location.headKey ?? location.chainId;
  }

  entryKey(seq: number): string {
    return this.prefix + pad(seq);
  }

  async head(): Promise<ChainHead> {
    return (await this.readHead()).head;
  }

  /**
   * Appends one entry. Two compare-and-swap writes serialise appenders: the entry slot (must not
   * exist) and then the head. Whoever finds a slot taken helps advance the head past it before
   * retrying, so neither a slow appender nor one that crashed between the writes can block others.
   */
  async append(fields: F): Promise<ChainEntry<F>> {
    const clash = RESERVED.find((name) => name in fields);
    if (clash) throw badRequest(`hash chain entry field "${clash}" is reserved`);
    // Hash exactly what storage will hold (Dates become strings, undefined members vanish).
    const body = JSON.parse(JSON.stringify(fields)) as F;
    for (let attempt = 0; attempt < MAX_APPEND_ATTEMPTS; attempt++) {
      const { head, version } = await this.readHead();
      const entry = buildEntry(body, head);
      if (await this.claimSlot(entry, head, version)) {
        await this.advanceHead(entry, version);
        return entry;
      }
      await pause(Math.random() * Math.min(2 ** attempt, 50));
    }
    throw new AppError("unavailable", `Hash chain ${this.describe()}: too much contention, append gave up`);
  }

  /** Walks every entry page by page, checking seq continuity, links, hashes and the head. */
  async verify(): Promise<VerifyResult> {
    const { head } = await this.readHead();
    const walk = new Walk(head);
    for await (const record of this.state.scan<ChainEntry>(this.location.scope, this.prefix)) {
      walk.visit(record.key.slice(this.prefix.length), record.value);
    }
    walk.checkHead();
    if (!walk.broken && walk.lastSeq > head.seq + 1) {
      // Appends that landed during the walk are legitimate; only a head still behind them is not.
      walk.checkHeadNotBehind((await this.readHead()).head);
    }
    const broken = walk.broken;
    return broken
      ? { valid: false, length: walk.count, brokenAt: broken.seq, reason: broken.reason }
      : { valid: true, length: walk.count, brokenAt: null };
  }

  /** One page of entries, newest first by default, optionally filtered; see ReadOptions. */
  async read(options: ReadOptions<F> = {}): Promise<ReadPage<F>> {
    const desc = (options.order ?? "desc") === "desc";
    const limit = options.limit ?? 100;
    const maxScan = options.maxScan ?? DEFAULT_MAX_SCAN;
    // A snapshot up to the head: an entry whose append has not advanced the head yet shows up once it has.
    const last = (await this.head()).seq;
    let position = options.cursor === undefined ? (desc ? last : 1) : parseCursor(options.cursor);
    const entries: ChainEntry<F>[] = [];
    let scanned = 0;
    let ended = false;
    while (!ended && position >= 1 && position <= last && entries.length < limit && scanned < maxScan) {
      const start = position;
      const block = await this.readBlock(position, desc, last);
      position = desc ? blockStart(start) - 1 : blockStart(start) + BLOCK_SIZE;
      for (const entry of block) {
        // Timestamps never decrease along a chain, so the first entry past the range ends the listing.
        if (pastRange(entry, desc, options)) {
          ended = true;
          break;
        }
        if (inRange(entry, options) && (options.filter?.(entry) ?? true)) entries.push(entry);
        if (entries.length === limit) {
          position = entry.seq + (desc ? -1 : 1);
          break;
        }
      }
      scanned += Math.abs(position - start);
    }
    const more = !ended && position >= 1 && position <= last;
    return { entries, nextCursor: more ? String(position) : null };
  }

  private async readHead(): Promise<{ head: ChainHead; version: number }> {
    const found = await this.state.getVersioned<ChainHead>(this.location.headScope, this.headKey);
    if (!found) return { head: { seq: 0, hash: GENESIS_HASH, timestamp: null }, version: 0 };
    return { head: found.value, version: found.version };
  }

  /** The entries of the block holding `position`, from `position` onwards in reading order. */
  private async readBlock(position: number, desc: boolean, last: number): Promise<ChainEntry<F>[]> {
    const blockPrefix = this.prefix + pad(position).slice(0, SEQ_DIGITS - BLOCK_DIGITS);
    const page = await this.state.list<ChainEntry<F>>(this.location.scope, {
      prefix: blockPrefix,
      limit: BLOCK_SIZE,
    });
    const entries = page.items
      .map((record) => record.value)
      .filter((entry) => entry.seq <= last && (desc ? entry.seq <= position : entry.seq >= position));
    return desc ? entries.reverse() : entries;
  }

  private async claimSlot(entry: ChainEntry<F>, head: ChainHead, version: number): Promise<boolean> {
    try {
      await this.state.set(this.location.scope, this.entryKey(entry.seq), entry, 0);
      return true;
    } catch (error) {
      if (!isConflict(error)) throw error;
      await this.helpStalledAppend(entry.seq, head, version);
      return false;
    }
  }

  /**
   * The slot after the head is taken: another append is between its two writes, or crashed there.
   * The slot's entry links to the head, so it already belongs to the chain; advancing the head for
   * it is what its writer would have done.
   */
  private async helpStalledAppend(seq: number, head: ChainHead, version: number): Promise<void> {
    const existing = await this.state.get<ChainEntry>(this.location.scope, this.entryKey(seq));
    if (!existing) return;
    if (existing.prevHash !== head.hash) {
      throw new AppError(
        "internal",
        `Hash chain ${this.describe()} is inconsistent: entry ${seq} does not link to the head; run verify`,
      );
    }
    await this.advanceHead(existing, version);
  }

  private async advanceHead(entry: ChainEntry, version: number): Promise<void> {
    const head: ChainHead = { seq: entry.seq, hash: entry.hash, timestamp: entry.timestamp };
    try {
      await this.state.set(this.location.headScope, this.headKey, head, version);
    } catch (error) {
      // Someone else already advanced the head for this entry (or past it): nothing left to do.
      if (!isConflict(error)) throw error;
    }
  }

  private describe(): string {
    return `${this.location.scope}/${this.location.chainId}`;
  }
}

function buildEntry<F extends ChainFields>(body: F, head: ChainHead): ChainEntry<F> {
  const now = nowIso();
  const timestamp = head.timestamp !== null && head.timestamp > now ? head.timestamp : now;
  const entry = { ...body, seq: head.seq + 1, id: newId(), timestamp, prevHash: head.hash };
  return { ...entry, hash: entryHash(entry) };
}

function blockStart(seq: number): number {
  return seq - (seq % BLOCK_SIZE);
}

function parseCursor(cursor: string): number {
  const seq = /^\d{1,20}$/.test(cursor) ? Number(cursor) : Number.NaN;
  if (!Number.isSafeInteger(seq) || seq < 1) throw badRequest("cursor: not a cursor from this listing");
  return seq;
}

function inRange(entry: ChainEntry, options: { since?: string; until?: string }): boolean {
  if (options.since !== undefined && entry.timestamp < options.since) return false;
  return options.until === undefined || entry.timestamp <= options.until;
}

function pastRange(entry: ChainEntry, desc: boolean, options: { since?: string; until?: string }): boolean {
  if (desc) return options.since !== undefined && entry.timestamp < options.since;
  return options.until !== undefined && entry.timestamp > options.until;
}
