import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { renderFunctionTypes } from "../../scripts/function-types/render.ts";
import { currentFunctionTypes, FUNCTION_TYPES_FILE } from "../../scripts/function-types.ts";

describe("the engine's function types", () => {
  it("are what the default service registers now (run npm run engine:types after changing a schema)", async () => {
    const written = readFileSync(FUNCTION_TYPES_FILE, "utf8");
    expect(
      written === (await currentFunctionTypes()),
      `${FUNCTION_TYPES_FILE} is stale: run npm run engine:types`,
    ).toBe(true);
  }, 60_000);
});

describe("renderFunctionTypes", () => {
  it("types each function's input as a caller writes it and its answer as its handler returns it", () => {
    const text = renderFunctionTypes([
      {
        id: "b::make",
        description: "Makes a b",
        input: z.strictObject({ name: z.string(), size: z.number().default(1) }),
        output: z.object({ id: z.string() }),
      },
      { id: "a::drop", input: z.strictObject({}), output: z.void() },
      { id: "a::any" },
    ]);
    expect(text).toContain(
      '  /** Makes a b */\n  "b::make": {\n    input: {\n      name: string;\n      size?: number;\n    };',
    );
    expect(text).toContain("    output: {\n      id: string;\n    };");
    expect(text).toContain('  "a::drop": {\n    input: Record<string, never>;\n    output: void;\n  };');
    expect(text).toContain('  "a::any": {\n    input: unknown;\n    output: unknown;\n  };');
    expect(text.indexOf('"a::any"')).toBeLessThan(text.indexOf('"b::make"'));
  });

  it("names a recursive schema's parts once, as shared types", () => {
    type Node = { children: Node[] };
    const node: z.ZodType<Node> = z.object({ children: z.array(z.lazy(() => node)) });
    const text = renderFunctionTypes([{ id: "t::tree", input: z.object({ root: node }), output: node }]);
    expect(text).toMatch(/export type \w+ = \{\n {2}children: \w+\[\];\n\};/);
  });
});
