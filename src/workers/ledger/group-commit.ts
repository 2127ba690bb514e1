/**
 * A group-commit queue: items are queued per key, and those that arrive while a group of the key is
 * being committed wait and go together in the next group (at most `maxGroup` at a time). A lone item is
 * a group of one; a busy key commits once per group instead of once per item, one after the other.
 * Groups of one key commit in arrival order, one at a time; different keys run independently.
 */
export type Settlement<O> = { value: O } | { error: unknown };

export interface GroupCommitOptions<I, O> {
  /**
   * Commits one group of a key: one settlement per item, in the items' order. A throw fails every
   * item of the group with that error.
   */
  commit(key: string, items: I[]): Promise<Array<Settlement<O>>>;
  maxGroup: number;
}

interface Waiting<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

interface KeyQueue<I, O> {
  waiting: Array<Waiting<I, O>>;
  /** The latest item's settlement (groups settle in arrival order). */
  last: Promise<void>;
}

export class GroupCommitQueue<I, O> {
  private readonly options: GroupCommitOptions<I, O>;
  private readonly queues = new Map<string, KeyQueue<I, O>>();

  constructor(options: GroupCommitOptions<I, O>) {
    this.options = options;
  }

  /** Queues the item in the key's next group; settles with the item's own outcome. */
  enqueue(key: string, item: I): Promise<O> {
    return this.enqueueMany(key, [item])[0] as Promise<O>;
  }

  /**
   * Queues items together: when the key is idle they form one group (enqueued one by one, the first
   * would commit alone and the rest in a second group). Each promise settles with its item's outcome.
   */
  enqueueMany(key: string, items: I[]): Array<Promise<O>> {
    const queued = this.queues.get(key);
    const queue: KeyQueue<I, O> = queued ?? { waiting: [], last: Promise.resolve() };
    const settled = items.map(
      (item) => new Promise<O>((resolve, reject) => queue.waiting.push({ item, resolve, reject })),
    );
    const last = settled.at(-1);
    if (!last) return settled;
    // Items settle in arrival order, so the last one's settlement is everyone's (one reaction, not all).
    queue.last = last.then(
      () => undefined,
      () => undefined,
    );
    if (!queued) {
      this.queues.set(key, queue);
      void this.drain(key, queue);
    }
    return settled;
  }

  /** Settles once every item of the key queued before the call is settled. */
  settled(key: string): Promise<void> {
    return this.queues.get(key)?.last ?? Promise.resolve();
  }

  /** The same for every key. */
  async allSettled(): Promise<void> {
    await Promise.all([...this.queues.values()].map((queue) => queue.last));
  }

  private async drain(key: string, queue: KeyQueue<I, O>): Promise<void> {
    while (queue.waiting.length > 0) {
      const group = queue.waiting.splice(0, this.options.maxGroup);
      await this.commitGroup(key, group).catch((error: unknown) => {
        for (const waiting of group) waiting.reject(error);
      });
    }
    this.queues.delete(key);
  }

  private async commitGroup(key: string, group: Array<Waiting<I, O>>): Promise<void> {
    const settlements = await this.options.commit(
      key,
      group.map((waiting) => waiting.item),
    );
    for (const [index, waiting] of group.entries()) {
      const settlement = settlements[index] as Settlement<O>;
      if ("value" in settlement) waiting.resolve(settlement.value);
      else waiting.reject(settlement.error);
    }
  }
}
