import { describe, expect, it } from "vitest";
import { UpstreamStatusError } from "../../../src/llm/provider-errors.ts";
import { AppError } from "../../../src/shared/errors.ts";
import {
  embedSettling,
  isInputRejection,
  MAX_SPLIT_CALLS,
  PROBE_TEXT,
} from "../../../src/workers/memory/embedding-refusals.ts";

/** As embed() fails on a provider's answer: our error, the provider's status in its cause. */
const upstream = (status: number) =>
  new AppError("upstream", `Provider openai answered HTTP ${status}`, {
    cause: new UpstreamStatusError(status, "fake"),
  });

/** A provider that refuses any request holding one of `bad` (400), or fails every request with `down`. */
function provider(bad: string[], down?: () => number | undefined) {
  const requests: string[][] = [];
  const embed = async (texts: string[]) => {
    requests.push(texts);
    const status = down?.();
    if (status) throw upstream(status);
    if (texts.some((text) => bad.includes(text))) throw upstream(400);
    return texts.map((text) => Float32Array.of(text.length, 1));
  };
  return { embed, requests };
}

const items = (n: number) => Array.from({ length: n }, (_, i) => `t${i}`);
const same = (text: string) => text;

describe("embedSettling", () => {
  it("tells a rejection of the inputs (400, 413, 422) from the provider's failures", () => {
    for (const status of [400, 413, 422]) expect(isInputRejection(upstream(status))).toBe(true);
    for (const status of [401, 403, 404, 429, 500, 503])
      expect(isInputRejection(upstream(status))).toBe(false);
    expect(isInputRejection(new AppError("timeout", "Provider openai did not answer in time"))).toBe(false);
    expect(isInputRejection(new AppError("budget_exceeded", "spent"))).toBe(false);
  });

  it("embeds a batch the provider takes in one request", async () => {
    const { embed, requests } = provider([]);
    const out = await embedSettling(items(5), same, embed);
    expect(out.embedded.map(({ item }) => item)).toEqual(items(5));
    expect(out.refused).toEqual([]);
    expect(requests).toHaveLength(1);
  });

  it("finds the one input the provider refuses and embeds every other", async () => {
    for (const at of [0, 17, 40, 63]) {
      const { embed, requests } = provider([`t${at}`]);
      const out = await embedSettling(items(64), same, embed);
      expect(out.refused).toEqual([`t${at}`]);
      expect(out.embedded.map(({ item }) => item).sort()).toEqual(
        items(64)
          .filter((item) => item !== `t${at}`)
          .sort(),
      );
      expect(out.left).toEqual([]);
      expect(out.failure).toBeUndefined();
      // The refused input was never sent with others once it was found; the probe went once.
      expect(requests.filter((texts) => texts.includes(PROBE_TEXT))).toEqual([[PROBE_TEXT]]);
      expect(requests.length).toBeLessThanOrEqual(MAX_SPLIT_CALLS);
    }
  });

  it("marks a lone input refused when the probe goes through", async () => {
    const { embed, requests } = provider(["bad"]);
    const out = await embedSettling(["bad"], same, embed);
    expect(out.refused).toEqual(["bad"]);
    expect(requests).toEqual([["bad"], [PROBE_TEXT]]);
  });

  it("marks nothing when the provider refuses the request itself (the probe too): the first failure is thrown", async () => {
    const { embed, requests } = provider([], () => 400);
    await expect(embedSettling(items(8), same, embed)).rejects.toThrow("HTTP 400");
    expect(requests).toEqual([items(8), [PROBE_TEXT]]);
  });

  it.each([401, 429, 503])(
    "never takes a batch apart on HTTP %i: the failure is thrown as it came",
    async (status) => {
      const { embed, requests } = provider(["t1"], () => status);
      await expect(embedSettling(items(8), same, embed)).rejects.toThrow(`HTTP ${status}`);
      expect(requests).toHaveLength(1);
    },
  );

  it("keeps what was embedded and leaves the rest when the provider fails while the batch is taken apart", async () => {
    let calls = 0;
    const { embed } = provider(["t7"], () => (++calls > 3 ? 503 : undefined));
    const out = await embedSettling(items(8), same, embed);
    // Request 1: all 8 (refused), 2: the probe, 3: t0–t3 (embedded), then the provider is down.
    expect(out.embedded.map(({ item }) => item)).toEqual(["t0", "t1", "t2", "t3"]);
    expect(out.refused).toEqual([]);
    expect(out.left.sort()).toEqual(["t4", "t5", "t6", "t7"]);
    expect(String(out.failure)).toMatch("HTTP 503");
  });

  it("stops after MAX_SPLIT_CALLS requests, leaving what is not settled for the next flush", async () => {
    const all = items(64);
    const { embed, requests } = provider(all);
    const out = await embedSettling(all, same, embed);
    // The requests taking it apart, and a second probe: nothing went through after the first.
    expect(requests).toHaveLength(MAX_SPLIT_CALLS + 1);
    expect(requests.at(-1)).toEqual([PROBE_TEXT]);
    expect(out.refused.length).toBeGreaterThan(0);
    expect([...out.refused, ...out.left].sort()).toEqual([...all].sort());
    expect(out.embedded).toEqual([]);
  });

  it("marks nothing when the provider turns to refusing any request after the probe went through", async () => {
    let calls = 0;
    const { embed } = provider(["t1"], () => (++calls > 2 ? 400 : undefined));
    const out = await embedSettling(items(4), same, embed);
    expect(out.refused).toEqual([]);
    expect(out.embedded).toEqual([]);
    expect(out.left.sort()).toEqual(items(4));
    expect(String(out.failure)).toMatch("HTTP 400");
  });
});
