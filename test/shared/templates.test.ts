import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  MAX_RENDERED_CHARS,
  renderArgs,
  renderTemplate,
  templateVariables,
} from "../../src/shared/templates.ts";

const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}$/);
const json = fc.jsonValue({ maxDepth: 3 });

describe("renderTemplate", () => {
  it("replaces a variable and a dotted path into objects and arrays", () => {
    const vars = { input: { url: "https://x", tags: ["a", "b"] }, page: "text" };
    expect(renderTemplate("{{input.url}} {{ input.tags.1 }} {{page}} {{input}}", vars)).toBe(
      'https://x b text {"url":"https://x","tags":["a","b"]}',
    );
  });

  it("leaves unknown variables and paths as written, braces included", () => {
    fc.assert(
      fc.property(name, fc.string({ maxLength: 20 }), (variable, text) => {
        const template = `${text}{{${variable}.missing}}{{unknown_${variable}}}`;
        const rendered = renderTemplate(template, { [variable]: {} });
        expect(rendered.endsWith(`{{${variable}.missing}}{{unknown_${variable}}}`)).toBe(true);
      }),
    );
  });

  it("refuses (400) to render past its limit, however many times a large value is named", () => {
    const big = { text: "x".repeat(200_000) };
    // 200 kB written out 60 times: past MAX_RENDERED_CHARS (10 M), refused before the whole is built.
    const template = "{{big}} ".repeat(60);
    expect(() => renderTemplate(template, { big })).toThrow(
      expect.objectContaining({ status: 400, message: expect.stringMatching(/would render to more than/) }),
    );
    expect(renderTemplate("{{big.text}}".repeat(2), { big })).toHaveLength(400_000);
    expect(MAX_RENDERED_CHARS).toBe(10_000_000);
  });

  it("never reads inherited properties", () => {
    expect(renderTemplate("{{input.constructor}} {{toString}}", { input: {} })).toBe(
      "{{input.constructor}} {{toString}}",
    );
  });
});

describe("renderArgs", () => {
  it("gives a whole-template leaf the value itself, whatever its type", () => {
    fc.assert(
      fc.property(name, json, (variable, value) => {
        expect(
          renderArgs({ field: `{{${variable}}}`, nested: [`{{ ${variable} }}`] }, { [variable]: value }),
        ).toEqual({
          field: value,
          nested: [value],
        });
      }),
    );
  });

  it("leaves everything that is not a string leaf as it was", () => {
    fc.assert(
      fc.property(json, (args) => {
        const withoutBraces = JSON.parse(JSON.stringify(args).replaceAll("{{", "{ {"));
        expect(renderArgs(withoutBraces, { input: "x" })).toEqual(withoutBraces);
      }),
    );
  });

  it("renders a mixed string leaf as text", () => {
    expect(renderArgs({ q: "n={{input.n}}" }, { input: { n: 3 } })).toEqual({ q: "n=3" });
  });
});

describe("templateVariables", () => {
  it("names each variable by its first segment", () => {
    expect(templateVariables({ a: "{{input.url}}", b: ["{{page}}", 3], c: "plain" }).sort()).toEqual([
      "input",
      "page",
    ]);
  });
});

describe("escaped braces", () => {
  it("renders \\{{ as a literal {{ that names no variable, whatever the variables hold", () => {
    fc.assert(
      fc.property(name, json, fc.string({ maxLength: 20 }), (variable, value, text) => {
        const template = `${text.replaceAll("\\", "").replaceAll("{", "")}\\{{${variable}}}`;
        const rendered = renderTemplate(template, { [variable]: value });
        expect(rendered.endsWith(`{{${variable}}}`)).toBe(true);
        expect(rendered).not.toContain("\\{{");
        expect(templateVariables(template)).toEqual([]);
      }),
    );
  });
});
