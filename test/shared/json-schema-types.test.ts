import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { typeOf } from "../../src/shared/json-schema-types.ts";

const object = (name: string) => ({
  type: "object",
  properties: { [name]: { type: "string" } },
  required: [name],
  additionalProperties: false,
});

describe("typeOf", () => {
  it("brackets an array of a union of objects, so the array holds every member", () => {
    const text = typeOf({ type: "array", items: { anyOf: [object("a"), object("b")] } });
    expect(text).toBe("({\n  a: string;\n} | {\n  b: string;\n})[]");
  });

  it("does not bracket a single object whose fields are unions, nor a string holding a bar", () => {
    expect(
      typeOf({ type: "array", items: { type: "object", properties: { k: { enum: ["x", "y"] } } } }),
    ).toBe('{\n  k?: "x" | "y";\n}[]');
    expect(typeOf({ type: "array", items: { const: "a|b" } })).toBe('"a|b"[]');
  });

  it("writes any union of string literals in an array with brackets exactly when it has two or more", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string(), { minLength: 1, maxLength: 5 }), (values) => {
        const text = typeOf({ type: "array", items: { enum: values } });
        expect(text.startsWith("(")).toBe(values.length > 1);
        expect(text.endsWith("[]")).toBe(true);
      }),
    );
  });
});
