/**
 * Answers of the untrusted-name resolver kept for a little while, so a hot name is not asked of DNS
 * on every fetch: addresses for their DNS TTL (at most `maxTtlMs`), "no such name" for a few seconds
 * (a page naming a missing host a hundred times asks once). Only addresses are kept; the SSRF rule is
 * applied by the caller to every answer it hands a socket, cached or not, and the socket connects to
 * exactly the addresses checked (DNS rebinding stays shut as before).
 */
import type { ResolvedAddress } from "./dns-answer.ts";

type Entry = { addresses: ResolvedAddress[]; expires: number } | { notFound: true; expires: number };

export interface DnsCacheOptions {
  /** Names kept; the least recently used goes first. */
  maxNames: number;
  /** The longest an answer is kept, whatever its TTL. */
  maxTtlMs: number;
  /** How long "no such name" is kept. */
  negativeTtlMs: number;
  now: () => number;
}

export class DnsCache {
  private readonly entries = new Map<string, Entry>();
  private readonly options: DnsCacheOptions;

  constructor(options: DnsCacheOptions) {
    this.options = options;
  }

  /** The addresses (a copy), `"notFound"`, or undefined when nothing fresh is kept. */
  get(key: string): ResolvedAddress[] | "notFound" | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expires <= this.options.now()) return undefined;
    this.entries.set(key, entry);
    if ("notFound" in entry) return "notFound";
    return entry.addresses.map(({ address, family }) => ({ address, family }));
  }

  /** Kept for the smallest TTL of the records (seconds), at most maxTtlMs; a TTL of 0 is not kept. */
  found(key: string, addresses: readonly ResolvedAddress[], ttlSeconds: number): void {
    const ms = Math.min(ttlSeconds * 1000, this.options.maxTtlMs);
    if (!(ms > 0) || this.options.maxNames <= 0) return;
    this.put(
      key,
      { addresses: addresses.map(({ address, family }) => ({ address, family })), expires: 0 },
      ms,
    );
  }

  notFound(key: string): void {
    if (this.options.negativeTtlMs <= 0 || this.options.maxNames <= 0) return;
    this.put(key, { notFound: true, expires: 0 }, this.options.negativeTtlMs);
  }

  private put(key: string, entry: Entry, ms: number): void {
    entry.expires = this.options.now() + ms;
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.options.maxNames) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }
}
