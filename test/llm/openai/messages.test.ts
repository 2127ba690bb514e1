import type { ModelMessage } from "ai";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { OpenAiMessage } from "../../../src/llm/openai/api-types.ts";
import {
  assistantToolCallMessage,
  fromOpenAiMessages,
  isTextPrompt,
  textOf,
  toOpenAiMessages,
  toolResultMessage,
} from "../../../src/llm/openai/messages.ts";
import { fixtures } from "./fixtures.ts";

describe("fromOpenAiMessages", () => {
  it("reads a documented tool round trip: developer text as system, text parts, the call and its result by name", () => {
    expect(fromOpenAiMessages(fixtures.request().messages)).toEqual({
      system: "You are a helpful assistant.",
      messages: [
        { role: "user", content: "What's the weather like in Paris today?" },
        {
          role: "assistant",
          content: [
            {
              type: "tool-call",
              toolCallId: "call_12345xyz",
              toolName: "get_weather",
              input: { location: "Paris, France" },
            },
          ],
        },
        {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "call_12345xyz",
              toolName: "get_weather",
              output: { type: "text", value: "14" },
            },
          ],
        },
      ],
    });
  });

  it("reads the tool calls of an answer given back as history, its arguments parsed", () => {
    const message = fixtures.toolCallCompletion().choices?.[0]?.message;
    const history = [{ role: "assistant", content: message?.content, tool_calls: message?.tool_calls }];
    const [assistant] = fromOpenAiMessages(history as OpenAiMessage[]).messages;
    expect(assistant).toEqual({
      role: "assistant",
      content: [
        {
          type: "tool-call",
          toolCallId: "call_abc123",
          toolName: "get_current_weather",
          input: { location: "Boston, MA" },
        },
      ],
    });
  });

  it("joins system messages, reads arguments that are not JSON as none, and names an unknown call's result 'tool'", () => {
    const { system, messages } = fromOpenAiMessages([
      { role: "system", content: "One." },
      { role: "developer", content: [{ type: "text", text: "Two." }] },
      {
        role: "assistant",
        content: "Let me look.",
        tool_calls: [{ id: "c1", type: "function", function: { name: "look", arguments: "{not json" } }],
      },
      { role: "tool", tool_call_id: "elsewhere", content: "seen" },
    ]);
    expect(system).toBe("One.\n\nTwo.");
    expect(messages[0]).toEqual({
      role: "assistant",
      content: [
        { type: "text", text: "Let me look." },
        { type: "tool-call", toolCallId: "c1", toolName: "look", input: {} },
      ],
    });
    expect(messages[1]).toMatchObject({ content: [{ toolCallId: "elsewhere", toolName: "tool" }] });
  });
});

describe("textOf", () => {
  it("is a string as it is, or the text parts joined, other parts skipped", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.constant(undefined))), (texts) => {
        const parts = texts.map((text) =>
          text === undefined ? { type: "image_url" } : { type: "text", text },
        );
        expect(textOf(parts)).toBe(texts.filter((text) => text !== undefined).join(""));
      }),
    );
    expect(textOf("plain")).toBe("plain");
    expect(textOf(null)).toBe("");
  });
});

describe("toOpenAiMessages", () => {
  it("sends the system text first, then the prompt's text messages as they are", () => {
    const prompt: ModelMessage[] = [
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello" },
    ];
    expect(isTextPrompt(prompt)).toBe(true);
    expect(toOpenAiMessages("Be brief", prompt)).toEqual([
      { role: "system", content: "Be brief" },
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello" },
    ]);
    expect(toOpenAiMessages(undefined, prompt)).toHaveLength(2);
  });

  it("leaves prompts with parts or tool messages to the AI SDK", () => {
    expect(isTextPrompt([{ role: "user", content: [{ type: "text", text: "Hi" }] }])).toBe(false);
    expect(
      isTextPrompt([
        {
          role: "tool",
          content: [
            { type: "tool-result", toolCallId: "c", toolName: "t", output: { type: "text", value: "x" } },
          ],
        },
      ]),
    ).toBe(false);
  });

  it("repeats a tool-calling answer and its results as OpenAI's next request carries them", () => {
    const calls = fixtures.toolCallCompletion().choices?.[0]?.message?.tool_calls ?? [];
    expect(assistantToolCallMessage("", calls)).toEqual({
      role: "assistant",
      content: null,
      tool_calls: calls,
    });
    expect(toolResultMessage("call_abc123", "Sunny")).toEqual({
      role: "tool",
      tool_call_id: "call_abc123",
      content: "Sunny",
    });
    expect(toolResultMessage("call_abc123", { celsius: 22 })).toMatchObject({ content: '{"celsius":22}' });
    expect(toolResultMessage("call_abc123", undefined)).toMatchObject({ content: "null" });
  });
});
