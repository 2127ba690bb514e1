import { describe, expect, it } from "vitest";
import {
  chunkWriter,
  clientToolCalls,
  DONE_EVENT,
  newCompletionMeta,
  toChatCompletion,
  toolCallsDelta,
  usageChunk,
} from "../../../src/llm/openai/responses.ts";
import { serverSentData } from "../../../src/llm/passthrough.ts";
import type { GenerateResult } from "../../../src/llm/types.ts";
import { fixtures } from "./fixtures.ts";

const meta = { id: "chatcmpl-abc123", created: 1699896916 };
const usage = { inputTokens: 82, outputTokens: 17, totalTokens: 99 };

/** A value's shape: its keys, nested, without the values (what two answers must share to read alike). */
const shape = (value: unknown): unknown =>
  value && typeof value === "object"
    ? Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, shape(inner)]))
    : typeof value;

describe("toChatCompletion", () => {
  it("answers tool calls for the client as OpenAI's documented tool-calling answer does", () => {
    const documented = fixtures.toolCallCompletion();
    const call = documented.choices?.[0]?.message?.tool_calls?.[0];
    const result: GenerateResult = {
      content: "",
      model: "gpt-4o-mini",
      usage,
      finishReason: "tool-calls",
      toolCalls: [
        { toolCallId: "call_abc123", toolName: "get_current_weather", input: { location: "Boston, MA" } },
      ],
    };
    const written = toChatCompletion(meta, result);
    expect(written.choices?.[0]?.finish_reason).toBe("tool_calls");
    expect(written.choices?.[0]?.message?.content).toBeNull();
    expect(written.choices?.[0]?.message?.tool_calls?.[0]).toMatchObject({
      id: call?.id,
      function: { name: call?.function.name },
    });
    // The same fields of the same types as the documented answer (which adds logprobs, usage details).
    expect(written.object).toBe(documented.object);
    expect(shape(written.choices?.[0]?.message)).toEqual(shape(documented.choices?.[0]?.message));
    const { completion_tokens_details: _, ...documentedUsage } = (documented.usage ?? {}) as Record<
      string,
      unknown
    >;
    expect(shape(written.usage)).toEqual(shape(documentedUsage));
    expect(shape({ ...written, choices: null, usage: null })).toEqual(
      shape({ ...documented, choices: null, usage: null }),
    );
    expect(written.usage).toEqual({ prompt_tokens: 82, completion_tokens: 17, total_tokens: 99 });
  });

  it("answers text with finish reason stop, and keeps the text beside any tool calls", () => {
    const text: GenerateResult = {
      content: "Hello!",
      model: "m",
      usage,
      finishReason: "stop",
      toolCalls: [],
    };
    expect(toChatCompletion(meta, text).choices?.[0]).toEqual({
      index: 0,
      message: { role: "assistant", content: "Hello!" },
      finish_reason: "stop",
    });
    const both = {
      ...text,
      finishReason: "tool-calls",
      toolCalls: [{ toolCallId: "c", toolName: "t", input: {} }],
    };
    expect(toChatCompletion(meta, both).choices?.[0]?.message?.content).toBe("Hello!");
  });

  it("hands over no tool calls that ran inside the turn (an agent's), and says length for them", () => {
    const ran: GenerateResult = { content: "", model: "m", usage, finishReason: "tool-calls", toolCalls: [] };
    expect(clientToolCalls(ran)).toBeUndefined();
    expect(toChatCompletion(meta, ran).choices?.[0]?.finish_reason).toBe("length");
  });
});

describe("streamed chunks", () => {
  it("are server-sent events shaped like OpenAI's documented chunks, ending with usage and [DONE]", async () => {
    const documented = fixtures.chunks("chat-completion");
    const chunk = chunkWriter(meta, "gpt-4o-mini");
    const events = [
      chunk({ role: "assistant", content: "" }, null),
      chunk({ content: "Hello" }, null),
      chunk({}, "stop"),
      usageChunk(meta, "gpt-4o-mini", { inputTokens: 9, outputTokens: 2, totalTokens: 11 }),
      DONE_EVENT,
    ];
    async function* stream() {
      yield events.join("");
    }
    const datas: string[] = [];
    for await (const data of serverSentData(stream())) datas.push(data);
    expect(datas.at(-1)).toBe("[DONE]");
    const written = datas.slice(0, -1).map((data) => JSON.parse(data));
    const without = ({ system_fingerprint: _, usage: __, ...rest }: Record<string, unknown>) => ({
      ...rest,
      choices: (rest.choices as Array<Record<string, unknown>>).map(({ logprobs: ___, ...choice }) => choice),
    });
    expect(written.slice(0, 3).map((chunk) => shape(chunk))).toEqual(
      [documented[0], documented[1], documented[3]].map((chunk) =>
        shape(without(chunk as Record<string, unknown>)),
      ),
    );
    expect(written[3].choices).toEqual([]);
    expect(written[3].usage).toEqual({ prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 });
  });

  it("share one id and creation time, in OpenAI's chatcmpl- form", () => {
    const fresh = newCompletionMeta();
    expect(fresh.id).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    expect(Number.isInteger(fresh.created)).toBe(true);
    const chunk = chunkWriter(fresh, "m");
    const ids = [chunk({ content: "a" }, null), chunk({}, "stop")].map(
      (event) => JSON.parse(event.slice(6)).id,
    );
    expect(ids).toEqual([fresh.id, fresh.id]);
  });

  it("hand over tool calls whole, numbered as OpenAI numbers a stream's calls", () => {
    const documented = fixtures.chunks("chat-completion-tool-calls")[0]?.choices?.[0]?.delta?.tool_calls?.[0];
    const calls = [
      {
        id: "call_DdmO9pD3xa9XTPNJ32zg2hcA",
        type: "function" as const,
        function: { name: "get_weather", arguments: '{"location":"Paris, France"}' },
      },
      { id: "call_2", type: "function" as const, function: { name: "get_time", arguments: "{}" } },
    ];
    const delta = toolCallsDelta(calls);
    expect(shape(delta.tool_calls[0])).toEqual(shape(documented));
    expect(delta.tool_calls).toMatchObject([
      { index: 0, ...calls[0] },
      { index: 1, id: "call_2" },
    ]);
    expect(toolCallsDelta([calls[1] as (typeof calls)[number]], 3).tool_calls).toMatchObject([{ index: 3 }]);
  });
});
