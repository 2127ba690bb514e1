import { describe, expect, it } from "vitest";
import { GroupCommitQueue, type Settlement } from "../../../src/workers/ledger/group-commit.ts";

/** A queue whose commits wait until released, recording the groups they were given. */
function heldQueue(maxGroup = 64) {
  const groups: Array<{ key: string; items: number[] }> = [];
  const releases: Array<() => void> = [];
  const queue = new GroupCommitQueue<number, number>({
    maxGroup,
    commit: async (key, items) => {
      groups.push({ key, items });
      await new Promise<void>((resolve) => releases.push(resolve));
      return items.map(
        (item): Settlement<number> => (item < 0 ? { error: new Error(`bad ${item}`) } : { value: item * 10 }),
      );
    },
  });
  /** Lets the oldest waiting commit finish, then lets the queue start its next one. */
  const release = async () => {
    releases.shift()?.();
    await new Promise((resolve) => setTimeout(resolve, 0));
  };
  return { queue, groups, release };
}

describe("GroupCommitQueue", () => {
  it("commits a lone item at once, as a group of one", async () => {
    const { queue, groups, release } = heldQueue();
    const answer = queue.enqueue("k", 1);
    expect(groups).toEqual([{ key: "k", items: [1] }]);
    await release();
    await expect(answer).resolves.toBe(10);
  });

  it("gathers the items that arrive during a commit into the next group, in arrival order", async () => {
    const { queue, groups, release } = heldQueue();
    const answers = [1, 2, 3, 4].map((item) => queue.enqueue("k", item));
    await release();
    await release();
    expect(groups.map((group) => group.items)).toEqual([[1], [2, 3, 4]]);
    await expect(Promise.all(answers)).resolves.toEqual([10, 20, 30, 40]);
  });

  it("commits items enqueued together on an idle key as one group, each with its own outcome", async () => {
    const { queue, groups, release } = heldQueue();
    const answers = queue.enqueueMany("k", [1, -2, 3]);
    expect(groups).toEqual([{ key: "k", items: [1, -2, 3] }]);
    // Watched before the commit ends: a rejection nobody handles yet is an unhandled rejection.
    const outcomes = Promise.allSettled(answers);
    await release();
    const [one, two, three] = await outcomes;
    expect(one).toEqual({ status: "fulfilled", value: 10 });
    expect(two).toMatchObject({ status: "rejected", reason: new Error("bad -2") });
    expect(three).toEqual({ status: "fulfilled", value: 30 });
    // Enqueued together behind a busy key, they wait for the next group together.
    const first = queue.enqueue("k", 4);
    const more = queue.enqueueMany("k", [5, 6]);
    await release();
    await release();
    expect(groups.slice(1).map((group) => group.items)).toEqual([[4], [5, 6]]);
    await expect(Promise.all([first, ...more])).resolves.toEqual([40, 50, 60]);
    await expect(queue.settled("k")).resolves.toBeUndefined();
  });

  it("takes at most maxGroup items in one group", async () => {
    const { queue, groups, release } = heldQueue(2);
    const answers = [1, 2, 3, 4, 5, 6].map((item) => queue.enqueue("k", item));
    for (let i = 0; i < 4; i++) await release();
    expect(groups.map((group) => group.items)).toEqual([[1], [2, 3], [4, 5], [6]]);
    await Promise.all(answers);
  });

  it("commits different keys independently, each in its own groups", async () => {
    const { queue, groups, release } = heldQueue();
    const answers = [queue.enqueue("a", 1), queue.enqueue("b", 2), queue.enqueue("a", 3)];
    expect(groups).toEqual([
      { key: "a", items: [1] },
      { key: "b", items: [2] },
    ]);
    for (let i = 0; i < 3; i++) await release();
    expect(groups[2]).toEqual({ key: "a", items: [3] });
    await expect(Promise.all(answers)).resolves.toEqual([10, 20, 30]);
  });

  it("settles each item with its own outcome: one failing item fails alone", async () => {
    const { queue, release } = heldQueue();
    const first = queue.enqueue("k", 1);
    const failing = queue.enqueue("k", -2);
    const third = queue.enqueue("k", 3);
    const failed = expect(failing).rejects.toThrow("bad -2");
    await release();
    await release();
    await failed;
    await expect(Promise.all([first, third])).resolves.toEqual([10, 30]);
  });

  it("fails every item of a group whose commit throws, and goes on with the next group", async () => {
    let calls = 0;
    const queue = new GroupCommitQueue<number, number>({
      maxGroup: 64,
      commit: async (_key, items) => {
        calls++;
        if (calls === 2) throw new Error("commit failed");
        await new Promise((resolve) => setTimeout(resolve, 5));
        return items.map((item) => ({ value: item }));
      },
    });
    const first = queue.enqueue("k", 1);
    const secondGroup = [queue.enqueue("k", 2), queue.enqueue("k", 3)];
    const failures = Promise.allSettled(secondGroup);
    await expect(first).resolves.toBe(1);
    for (const failure of await failures)
      expect(failure).toMatchObject({ reason: new Error("commit failed") });
    await expect(queue.enqueue("k", 4)).resolves.toBe(4);
  });

  it("settled(key) waits for every item of the key queued before it, and no other key's", async () => {
    const { queue, release } = heldQueue();
    const settledItems: number[] = [];
    for (const item of [1, 2]) void queue.enqueue("k", item).then((value) => settledItems.push(value));
    void queue.enqueue("other", 9);
    const waited = queue.settled("k").then(() => [...settledItems]);
    await release(); // k's first group
    await release(); // other's group
    await release(); // k's second group
    await expect(waited).resolves.toEqual([10, 20]);
    await expect(queue.settled("idle")).resolves.toBeUndefined();
  });

  it("allSettled waits for every key", async () => {
    const { queue, release } = heldQueue();
    let settled = 0;
    for (const key of ["a", "b"]) void queue.enqueue(key, 1).then(() => settled++);
    const all = queue.allSettled().then(() => settled);
    await release();
    await release();
    await expect(all).resolves.toBe(2);
  });
});
