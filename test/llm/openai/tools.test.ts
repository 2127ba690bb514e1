import { jsonSchema, tool } from "ai";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  fromOpenAiToolChoice,
  fromOpenAiTools,
  openAiSchema,
  parseToolArguments,
  toOpenAiToolCalls,
  toOpenAiToolChoice,
  toOpenAiTools,
} from "../../../src/llm/openai/tools.ts";
import { fixtures } from "./fixtures.ts";

describe("tools", () => {
  it("reads a client's documented tools and sends them back unchanged", () => {
    const { tools } = fixtures.request();
    const read = fromOpenAiTools(tools);
    expect(Object.keys(read ?? {})).toEqual(["get_weather"]);
    expect(read?.get_weather?.execute).toBeUndefined();
    expect(toOpenAiTools(read ?? {})).toEqual(tools);
  });

  it("gives a tool without parameters an empty object schema, and no tools as none", () => {
    const read = fromOpenAiTools([{ type: "function", function: { name: "ping" } }]);
    expect(toOpenAiTools(read ?? {})).toEqual([
      { type: "function", function: { name: "ping", parameters: { type: "object", properties: {} } } },
    ]);
    expect(fromOpenAiTools([])).toBeUndefined();
    expect(fromOpenAiTools(undefined)).toBeUndefined();
  });

  it("sends a schema once made for every turn that uses the same tool", () => {
    const inputSchema = jsonSchema({ type: "object", properties: { q: { type: "string" } } });
    const first = toOpenAiTools({ search: tool({ inputSchema }) });
    const second = toOpenAiTools({ search: tool({ description: "Search", inputSchema }) });
    expect(second[0]?.function.parameters).toBe(first[0]?.function.parameters);
    expect(second[0]?.function.description).toBe("Search");
  });

  it("drops from schemas what OpenAI refuses, at any depth", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(JSON.stringify(openAiSchema({ nested: { value, propertyNames: {} } }))).not.toContain(
          '"propertyNames"',
        );
      }),
    );
  });
});

describe("tool choice", () => {
  it("reads OpenAI's tool_choice values and writes them back the same", () => {
    const named = { type: "function", function: { name: "get_weather" } } as const;
    for (const choice of ["auto", "none", "required", named] as const) {
      expect(toOpenAiToolChoice(fromOpenAiToolChoice(choice))).toEqual(choice);
    }
    expect(fromOpenAiToolChoice(named)).toEqual({ type: "tool", toolName: "get_weather" });
  });

  it("takes anything unrecognised for the default, which is sent as auto", () => {
    expect(fromOpenAiToolChoice({ type: "function" })).toBeUndefined();
    expect(fromOpenAiToolChoice("sometimes")).toBeUndefined();
    expect(toOpenAiToolChoice(undefined)).toBe("auto");
  });
});

describe("tool calls", () => {
  it("parses the documented call's arguments, and says when they are not JSON", () => {
    const call = fixtures.toolCallCompletion().choices?.[0]?.message?.tool_calls?.[0];
    expect(parseToolArguments(call?.function.arguments)).toEqual({ input: { location: "Boston, MA" } });
    expect(parseToolArguments("  ")).toEqual({ input: {} });
    expect(parseToolArguments("{oops")).toEqual({
      error: expect.stringMatching(/^The arguments are not JSON/),
    });
  });

  it("writes our calls as OpenAI's, arguments as JSON text that parses back to the input", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string(), (input, name) => {
        const [call] = toOpenAiToolCalls([{ toolCallId: "call_1", toolName: name, input }]);
        expect(call).toMatchObject({ id: "call_1", type: "function", function: { name } });
        // JSON has no -0: what parses back is the input's JSON form.
        expect(parseToolArguments(call?.function.arguments)).toEqual({
          input: JSON.parse(JSON.stringify(input ?? {})),
        });
      }),
    );
  });
});
