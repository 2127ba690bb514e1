import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fromOpenAiUsage, toOpenAiUsage } from "../../../src/llm/openai/usage.ts";
import { fixtures } from "./fixtures.ts";

describe("fromOpenAiUsage", () => {
  it("reads the token counts of an answer's usage block, its details left aside", () => {
    expect(fromOpenAiUsage(fixtures.completion().usage)).toEqual({
      inputTokens: 19,
      outputTokens: 10,
      totalTokens: 29,
    });
    expect(fromOpenAiUsage(fixtures.toolCallCompletion().usage)).toEqual({
      inputTokens: 82,
      outputTokens: 17,
      totalTokens: 99,
    });
  });

  it("reads a stream's usage from its last chunk, which has no choices", () => {
    const last = fixtures.chunks("chat-completion").at(-1);
    expect(last?.choices).toEqual([]);
    expect(fromOpenAiUsage(last?.usage)).toEqual({ inputTokens: 9, outputTokens: 2, totalTokens: 11 });
    const earlier = fixtures.chunks("chat-completion")[0];
    expect(fromOpenAiUsage(earlier?.usage)).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });
  });

  it("adds up a total the provider left out", () => {
    expect(fromOpenAiUsage({ prompt_tokens: 3, completion_tokens: 4 })).toEqual({
      inputTokens: 3,
      outputTokens: 4,
      totalTokens: 7,
    });
  });
});

describe("toOpenAiUsage", () => {
  it("is read back as the same usage", () => {
    const count = fc.nat({ max: 10_000_000 });
    fc.assert(
      fc.property(count, count, count, (inputTokens, outputTokens, totalTokens) => {
        const usage = { inputTokens, outputTokens, totalTokens };
        expect(fromOpenAiUsage(toOpenAiUsage(usage))).toEqual(usage);
      }),
    );
  });
});
