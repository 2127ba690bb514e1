import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ANSWER_TYPES_FILE, currentAnswerTypes } from "../../scripts/console-types.ts";
import { renderAnswerTypes, typeOf } from "../../src/http/openapi-types.ts";

describe("the console's answer types", () => {
  it("are what the service's OpenAPI document says now (run npm run console:types after changing an answer)", async () => {
    const written = readFileSync(ANSWER_TYPES_FILE, "utf8");
    expect(
      written === (await currentAnswerTypes()),
      `${ANSWER_TYPES_FILE} is stale: run npm run console:types`,
    ).toBe(true);
  }, 60_000);
});

describe("typeOf", () => {
  it("writes the JSON Schema that zod produces as TypeScript", () => {
    expect(typeOf({ type: "string" })).toBe("string");
    expect(typeOf({ type: "integer" })).toBe("number");
    expect(typeOf({ type: ["string", "null"] })).toBe("string | null");
    expect(typeOf({ enum: ["a", "b"] })).toBe('"a" | "b"');
    expect(typeOf({ const: "list" })).toBe('"list"');
    expect(typeOf({ anyOf: [{ type: "array", items: { type: "string" } }, { type: "null" }] })).toBe(
      "string[] | null",
    );
    expect(typeOf({ type: "array", items: { anyOf: [{ type: "string" }, { type: "number" }] } })).toBe(
      "(string | number)[]",
    );
    expect(typeOf({ type: "array", prefixItems: [{ type: "string" }, { type: "number" }] })).toBe(
      "[string, number]",
    );
    expect(typeOf({ type: "object", additionalProperties: { type: "number" } })).toBe(
      "Record<string, number>",
    );
    expect(typeOf({ type: "object", properties: {}, additionalProperties: false })).toBe(
      "Record<string, never>",
    );
    expect(typeOf({ $ref: "#/components/schemas/Node" })).toBe("Node");
    expect(typeOf({})).toBe("unknown");
    expect(typeOf({ anyOf: [{ type: "string" }, {}] })).toBe("unknown");
  });

  it("marks optional properties, quotes keys that are not names, and keeps descriptions as comments", () => {
    expect(
      typeOf({
        type: "object",
        properties: { id: { type: "string", description: "The id */ here" }, "x-y": { type: "boolean" } },
        required: ["id"],
        additionalProperties: false,
      }),
    ).toBe('{\n  /** The id * / here */\n  id: string;\n  "x-y"?: boolean;\n}');
  });
});

describe("renderAnswerTypes", () => {
  it("keys each operation's JSON success answer by its id, and leaves out answers without JSON", () => {
    const text = renderAnswerTypes({
      paths: {
        "/a": {
          get: {
            operationId: "a::get",
            description: "Gets a",
            responses: { "200": { content: { "application/json": { schema: { type: "string" } } } } },
          },
          delete: { operationId: "a::delete", responses: { "204": {} } },
        },
        "/b": {
          post: {
            operationId: "b::make",
            responses: {
              "201": { content: { "application/json": { schema: { $ref: "#/components/schemas/B" } } } },
              "400": { content: { "application/json": { schema: { type: "number" } } } },
            },
          },
        },
      },
      components: {
        schemas: { B: { type: "object", properties: { n: { type: "number" } }, required: ["n"] } },
      },
    });
    expect(text).toContain("export type B = {\n  n: number;\n};");
    expect(text).toContain('  /** Gets a */\n  "a::get": string;\n');
    expect(text).toContain('  "b::make": B;\n');
    expect(text).not.toContain("a::delete");
  });

  it("names an answer written before instead of writing the same type again", () => {
    const answer = {
      "200": {
        content: {
          "application/json": { schema: { type: "object", properties: { n: { type: "number" } } } },
        },
      },
    };
    const text = renderAnswerTypes({
      paths: {
        "/a": { post: { operationId: "a::one", responses: answer } },
        "/b": { post: { operationId: "b::two", responses: answer } },
      },
    });
    expect(text).toContain('  "b::two": Answers["a::one"];\n');
  });
});
