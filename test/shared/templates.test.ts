import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { renderArgs, renderTemplate, templateVariables } from "../../src/shared/templates.ts";

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
