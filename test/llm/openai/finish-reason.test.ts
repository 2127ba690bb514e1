import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fromOpenAiFinishReason, toOpenAiFinishReason } from "../../../src/llm/openai/finish-reason.ts";
import { fixtures } from "./fixtures.ts";

describe("fromOpenAiFinishReason", () => {
  it("reads the finish reasons of OpenAI's answers, streamed or not, in the AI SDK's words", () => {
    expect(fromOpenAiFinishReason(fixtures.completion().choices?.[0]?.finish_reason)).toBe("stop");
    expect(fromOpenAiFinishReason(fixtures.toolCallCompletion().choices?.[0]?.finish_reason)).toBe(
      "tool-calls",
    );
    const last = (name: "chat-completion" | "chat-completion-tool-calls") =>
      fixtures
        .chunks(name)
        .flatMap((chunk) => chunk.choices ?? [])
        .map((choice) => choice.finish_reason)
        .filter(Boolean);
    expect(last("chat-completion").map(fromOpenAiFinishReason)).toEqual(["stop"]);
    expect(last("chat-completion-tool-calls").map(fromOpenAiFinishReason)).toEqual(["tool-calls"]);
  });

  it("maps every documented reason, the legacy function_call too, and anything else to other", () => {
    expect(
      ["stop", "length", "content_filter", "tool_calls", "function_call", "unknown", null, undefined].map(
        fromOpenAiFinishReason,
      ),
    ).toEqual(["stop", "length", "content-filter", "tool-calls", "tool-calls", "other", "other", "other"]);
  });
});

describe("toOpenAiFinishReason", () => {
  it("says tool_calls only when the reply hands the client tool calls to run", () => {
    expect(toOpenAiFinishReason("tool-calls", true)).toBe("tool_calls");
    expect(toOpenAiFinishReason("stop", true)).toBe("tool_calls");
  });

  it("says length for a turn cut short, also one still calling tools it runs itself", () => {
    expect(toOpenAiFinishReason("length", false)).toBe("length");
    expect(toOpenAiFinishReason("tool-calls", false)).toBe("length");
  });

  it("says stop for any other ending", () => {
    fc.assert(
      fc.property(
        fc.string().filter((reason) => reason !== "length" && reason !== "tool-calls"),
        (reason) => {
          expect(toOpenAiFinishReason(reason, false)).toBe("stop");
        },
      ),
    );
  });

  it("gives back what a provider said for stop, length and tool calls, read and written again", () => {
    for (const reason of ["stop", "length", "tool_calls"] as const) {
      const ours = fromOpenAiFinishReason(reason);
      expect(toOpenAiFinishReason(ours, ours === "tool-calls")).toBe(reason);
    }
  });
});
