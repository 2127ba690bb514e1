import { describe, expect, it } from "vitest";
import { serverSentEvents } from "../../src/shared/sse.ts";

async function all(chunks: Array<string | Uint8Array>) {
  async function* stream() {
    yield* chunks;
  }
  const seen: Array<{ event: string; data: string }> = [];
  for await (const event of serverSentEvents(stream())) seen.push(event);
  return seen;
}

describe("serverSentEvents", () => {
  it("names each event (message when unnamed), joins data lines, and skips blocks without data", async () => {
    expect(
      await all(["event: start\ndata: {}\n\n: ping\n\ndata: a\ndata: b\n\nevent: done\ndata: 1"]),
    ).toEqual([
      { event: "start", data: "{}" },
      { event: "message", data: "a\nb" },
      { event: "done", data: "1" },
    ]);
  });

  it("reads bytes with a character split across chunks", async () => {
    const bytes = new TextEncoder().encode("event: text\ndata: héllo\n\n");
    const cut = bytes.indexOf(0xc3) + 1;
    expect(await all([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual([
      { event: "text", data: "héllo" },
    ]);
  });
});
