import { createHash } from "node:crypto";
import { canonicalJson } from "./canonical-json.ts";

export interface ChainHead {
  seq: number;
  hash: string;
  /** Timestamp of the last entry; appends never go below it, so timestamps never decrease along a chain. */
  timestamp: string | null;
}

export type ChainFields = Record<string, unknown>;

export type ChainEntry<F extends ChainFields = ChainFields> = F & {
  seq: number;
  id: string;
  timestamp: string;
  prevHash: string;
  hash: string;
};

export const GENESIS_HASH = "0".repeat(64);

/** SHA-256 over the canonical JSON of the whole entry except `hash` (so including prevHash). */
export function entryHash(entry: ChainFields): string {
  const { hash: _hash, ...rest } = entry;
  return createHash("sha256").update(canonicalJson(rest)).digest("hex");
}

type Failure = { seq: number; reason: string };

/** State of one verification pass; only the first failure is kept, but every entry is counted. */
export class Walk {
  count = 0;
  lastSeq = 0;
  broken: Failure | null = null;
  private prevHash = GENESIS_HASH;
  private hashAtHead: string;
  private readonly head: ChainHead;

  constructor(head: ChainHead) {
    this.head = head;
    this.hashAtHead = head.seq === 0 ? GENESIS_HASH : "";
  }

  visit(suffix: string, entry: ChainEntry): void {
    this.count++;
    const keySeq = /^\d{20}$/.test(suffix) ? Number(suffix) : Number.NaN;
    if (!this.broken) this.broken = this.problem(keySeq, suffix, entry);
    if (Number.isSafeInteger(keySeq)) this.lastSeq = keySeq;
    this.prevHash = typeof entry?.hash === "string" ? entry.hash : "";
    if (keySeq === this.head.seq) this.hashAtHead = this.prevHash;
  }

  checkHead(): void {
    if (this.broken) return;
    const { seq } = this.head;
    const next = this.lastSeq + 1;
    if (next <= seq) {
      this.fail(next, `entries ${next} to ${seq} are missing (the head records ${seq})`);
    } else if (this.hashAtHead !== this.head.hash) {
      this.fail(seq, `the head does not match entry ${seq}`);
    }
  }

  checkHeadNotBehind(current: ChainHead): void {
    if (this.lastSeq <= current.seq + 1) return;
    this.fail(current.seq + 2, `the head is behind: it records ${current.seq} of ${this.lastSeq} entries`);
  }

  private problem(keySeq: number, suffix: string, entry: ChainEntry): Failure | null {
    const expected = this.lastSeq + 1;
    const at = (seq: number, reason: string) => ({ seq, reason });
    if (!Number.isSafeInteger(keySeq)) return at(expected, `unexpected key "${suffix}" in the chain`);
    if (keySeq !== expected) return at(expected, `entry ${expected} is missing`);
    if (entry === null || typeof entry !== "object") return at(keySeq, `entry ${keySeq} is not an object`);
    if (entry.seq !== keySeq)
      return at(keySeq, `entry at ${keySeq} claims seq ${entry.seq} (moved or reordered)`);
    if (entry.prevHash !== this.prevHash)
      return at(keySeq, `entry ${keySeq} does not link to its predecessor`);
    if (entryHash(entry) !== entry.hash) return at(keySeq, `entry ${keySeq} was modified (hash mismatch)`);
    return null;
  }

  private fail(seq: number, reason: string): void {
    this.broken = { seq, reason };
  }
}
