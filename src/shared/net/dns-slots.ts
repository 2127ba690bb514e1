/**
 * The lookup slots of the untrusted-name resolver (./dns-resolver.ts), shared fairly between callers.
 * Each slot is a c-ares channel of its own (so that cancelling one lookup at its deadline cancels
 * nothing else). The slots and the queue are the process's, but one caller (a realm, or the service
 * itself) holds at most `perCaller` of the slots and `perCallerQueued` of the queue: a realm whose
 * agents or sandbox programs ask for thousands of names that never answer waits behind its own lookups
 * only, and other realms still get slots.
 */
import { Resolver as AresResolver } from "node:dns/promises";

export interface Slot {
  resolver: AresResolver;
  servers: string;
}

export interface SlotLimits {
  /** Lookups sent at once over all callers. */
  size: number;
  /** Lookups waiting over all callers. */
  maxQueued: number;
  /** Lookups one caller has sent at once. */
  perCaller: number;
  /** Lookups one caller has waiting. */
  perCallerQueued: number;
}

interface Waiting {
  caller: string;
  grant: (slot: Slot) => void;
  timer: NodeJS.Timeout;
}

export class Slots {
  private readonly idle: Slot[] = [];
  private busy = 0;
  private readonly running = new Map<string, number>();
  private readonly waiting: Waiting[] = [];
  private readonly limits: SlotLimits;

  constructor(limits: SlotLimits) {
    this.limits = { ...limits, perCaller: Math.min(limits.perCaller, limits.size) };
  }

  /** A slot for `caller` (as messages name it: "realm r1", "the service") now, or in its turn before `deadline` (ETIMEOUT), or EBUSY when too many wait. */
  acquire(caller: string, deadline: number, hostname: string): Promise<Slot> {
    if (this.busy < this.limits.size && this.runningOf(caller) < this.limits.perCaller) {
      this.busy++;
      this.count(caller, 1);
      return Promise.resolve(this.idle.pop() ?? newSlot());
    }
    const queued = this.waiting.filter((each) => each.caller === caller).length;
    if (queued >= this.limits.perCallerQueued) return Promise.reject(this.overShare(caller, hostname));
    if (this.waiting.length >= this.limits.maxQueued) {
      return Promise.reject(
        dnsError("EBUSY", hostname, `too many DNS lookups waiting (${this.limits.maxQueued})`),
      );
    }
    return new Promise((resolve, reject) => {
      const entry: Waiting = {
        caller,
        grant: (slot) => {
          clearTimeout(entry.timer);
          resolve(slot);
        },
        timer: setTimeout(
          () => {
            this.waiting.splice(this.waiting.indexOf(entry), 1);
            reject(dnsError("ETIMEOUT", hostname));
          },
          Math.max(0, deadline - Date.now()),
        ),
      };
      this.waiting.push(entry);
    });
  }

  /**
   * The slot goes to the longest-waiting lookup whose caller is below its share (skipping those of a
   * caller at its share, who wait for their own lookups to end), else back to the idle ones.
   */
  release(caller: string, slot: Slot): void {
    this.count(caller, -1);
    const index = this.waiting.findIndex((each) => this.runningOf(each.caller) < this.limits.perCaller);
    if (index >= 0) {
      const [next] = this.waiting.splice(index, 1) as [Waiting];
      this.count(next.caller, 1);
      next.grant(slot);
    } else {
      this.busy--;
      this.idle.push(slot);
    }
  }

  private runningOf(caller: string): number {
    return this.running.get(caller) ?? 0;
  }

  private count(caller: string, delta: number): void {
    const next = this.runningOf(caller) + delta;
    if (next > 0) this.running.set(caller, next);
    else this.running.delete(caller);
  }

  private overShare(caller: string, hostname: string): NodeJS.ErrnoException {
    const { perCaller, perCallerQueued } = this.limits;
    const overShare = `${caller} has too many DNS lookups at once (its share: ${perCaller} running, ${perCallerQueued} waiting)`;
    // `overShare`: the caller's own doing, which guardedLookup reports as such (429, not 503).
    return Object.assign(dnsError("EBUSY", hostname, overShare), { overShare });
  }
}

/** An error as node's resolver gives them: `code` and `hostname`, the message starting with the code. */
export function dnsError(code: string, hostname: string, why?: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code} ${hostname}${why ? `: ${why}` : ""}`), { code, hostname });
}

/** Per attempt 1.5 s, 3 attempts: c-ares gives up near the default deadline on its own, too. */
function newSlot(): Slot {
  return { resolver: new AresResolver({ timeout: 1500, tries: 3 }), servers: "" };
}
