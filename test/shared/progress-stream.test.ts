import { describe, expect, it } from "vitest";
import { openProgress, type ProgressItem } from "../../src/shared/progress-stream.ts";

async function all<T>(items: AsyncGenerator<ProgressItem<T>>): Promise<ProgressItem<T>[]> {
  const seen: ProgressItem<T>[] = [];
  for await (const item of items) seen.push(item);
  return seen;
}

describe("openProgress", () => {
  it("rejects when the call fails before telling anything (the refusal can still be a status)", async () => {
    await expect(openProgress(async () => Promise.reject(new Error("over budget")))).rejects.toThrow(
      "over budget",
    );
  });

  it("yields the events in order, then the result, also those told before the stream was read", async () => {
    const items = await openProgress(async (tell) => {
      tell({ n: 1 });
      tell({ n: 2 });
      await new Promise((resolve) => setTimeout(resolve, 5));
      tell({ n: 3 });
      return "done";
    });
    expect(await all(items)).toEqual([
      { kind: "event", event: { n: 1 } },
      { kind: "event", event: { n: 2 } },
      { kind: "event", event: { n: 3 } },
      { kind: "result", result: "done" },
    ]);
  });

  it("ends with the failure when the call fails after telling something", async () => {
    const items = await openProgress(async (tell) => {
      tell("started");
      throw new Error("model went away");
    });
    const seen = await all(items);
    expect(seen[0]).toEqual({ kind: "event", event: "started" });
    expect(seen[1]).toMatchObject({ kind: "error", error: new Error("model went away") });
  });

  it("aborts the call when the reader leaves early", async () => {
    let signal: AbortSignal | undefined;
    const items = await openProgress((tell, given) => {
      signal = given;
      tell("first");
      return new Promise((_resolve, reject) => given.addEventListener("abort", () => reject(given.reason)));
    });
    for await (const _item of items) break;
    expect(signal?.aborted).toBe(true);
  });
});
