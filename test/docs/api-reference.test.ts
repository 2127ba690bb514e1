import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { exampleOf, resolveRef, type Schema } from "../../scripts/api-reference/example.ts";
import {
  exampleBodyOf,
  type OpenApiDocument,
  operationsOf,
  renderApiReference,
  requestSchemaOf,
} from "../../scripts/api-reference/render.ts";
import { API_REFERENCE_FILE, formatMarkdown } from "../../scripts/api-reference.ts";
import { withDefaultService } from "../../scripts/default-service.ts";
import { jsonSchemaOf } from "../../src/http/openapi.ts";

const ROOT = resolve(import.meta.dirname, "..", "..");

/**
 * The JSON Schema keywords zod writes, checked: type, const, enum, bounds, lengths, pattern, required,
 * properties, additionalProperties: false, items, anyOf/oneOf (one branch), allOf, and `$ref`s into the
 * components. Returns what is wrong, empty when the value fits.
 */
function problems(
  value: unknown,
  schema: unknown,
  components: Record<string, unknown>,
  at = "body",
): string[] {
  if (typeof schema !== "object" || schema === null) return [];
  const resolved = resolveRef(schema as Schema, components);
  if (!resolved) return [`${at}: unresolved ${String((schema as Schema).$ref)}`];
  const s = resolved;
  const out: string[] = [];
  if ("const" in s && JSON.stringify(value) !== JSON.stringify(s.const)) out.push(`${at}: not the const`);
  if (Array.isArray(s.enum) && !s.enum.some((item) => JSON.stringify(item) === JSON.stringify(value))) {
    out.push(`${at}: not in the enum`);
  }
  const branches = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (
    Array.isArray(branches) &&
    !branches.some((branch) => problems(value, branch, components, at).length === 0)
  ) {
    out.push(`${at}: fits no branch`);
  }
  if (Array.isArray(s.allOf)) for (const part of s.allOf) out.push(...problems(value, part, components, at));
  const types = s.type === undefined ? undefined : ([] as string[]).concat(s.type as string | string[]);
  if (types && !types.some((type) => hasType(value, type))) return [...out, `${at}: not ${types.join("|")}`];
  if (typeof value === "string") {
    if (typeof s.minLength === "number" && value.length < s.minLength) out.push(`${at}: too short`);
    if (typeof s.maxLength === "number" && value.length > s.maxLength) out.push(`${at}: too long`);
    if (typeof s.pattern === "string" && !new RegExp(s.pattern, "u").test(value)) out.push(`${at}: pattern`);
  }
  if (typeof value === "number") {
    if (typeof s.minimum === "number" && value < s.minimum) out.push(`${at}: below minimum`);
    if (typeof s.maximum === "number" && value > s.maximum) out.push(`${at}: above maximum`);
    if (typeof s.exclusiveMinimum === "number" && value <= s.exclusiveMinimum) out.push(`${at}: not above`);
    if (typeof s.exclusiveMaximum === "number" && value >= s.exclusiveMaximum) out.push(`${at}: not below`);
  }
  if (Array.isArray(value)) {
    if (typeof s.minItems === "number" && value.length < s.minItems) out.push(`${at}: too few items`);
    if (typeof s.maxItems === "number" && value.length > s.maxItems) out.push(`${at}: too many items`);
    value.forEach((item, index) => {
      const itemSchema = Array.isArray(s.prefixItems) ? s.prefixItems[index] : s.items;
      out.push(...problems(item, itemSchema, components, `${at}[${index}]`));
    });
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    const properties = (s.properties ?? {}) as Record<string, unknown>;
    for (const name of (s.required ?? []) as string[])
      if (!(name in record)) out.push(`${at}.${name}: missing`);
    for (const [name, item] of Object.entries(record)) {
      if (name in properties) out.push(...problems(item, properties[name], components, `${at}.${name}`));
      else if (s.additionalProperties === false) out.push(`${at}.${name}: not allowed`);
      else out.push(...problems(item, s.additionalProperties, components, `${at}.${name}`));
    }
  }
  return out;
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "array":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    case "null":
      return value === null;
    default:
      return typeof value === type;
  }
}

interface Service {
  document: OpenApiDocument;
  /** The zod schema a function reads its request with: its input, or an envelope function's body. */
  schemas: Map<string, z.ZodType | undefined>;
}

let service: Service;

beforeAll(async () => {
  service = await withDefaultService(async (running, document) => {
    const schemas = new Map<string, z.ZodType | undefined>();
    for (const id of ["ledger::spend", "tool::shell_exec", "channel::webhook::inbound"]) {
      const fn = running.engine.functions.get(id);
      schemas.set(id, fn?.body ?? fn?.input);
    }
    return { document, schemas };
  });
}, 60_000);

const operation = (method: string, path: string) => {
  const found = operationsOf(service.document).find((item) => item.method === method && item.path === path);
  if (!found) throw new Error(`no ${method} ${path} in the OpenAPI document`);
  return found.op;
};

describe("the API reference", () => {
  it("is what the service's OpenAPI document says now (run npm run api:reference after changing a route)", () => {
    const written = readFileSync(API_REFERENCE_FILE, "utf8");
    expect(
      written === formatMarkdown(renderApiReference(service.document)),
      `${API_REFERENCE_FILE} is stale: run npm run api:reference`,
    ).toBe(true);
  });

  it("gives every operation with a JSON body an example that fits the body's schema", () => {
    const components = service.document.components?.schemas ?? {};
    const bad = operationsOf(service.document)
      .filter(({ op }) => requestSchemaOf(op))
      .map(({ method, path, op }) => ({
        at: `${method} ${path}`,
        wrong: problems(exampleBodyOf(service.document, op), requestSchemaOf(op), components),
      }))
      .filter(({ wrong }) => wrong.length > 0);
    expect(bad).toEqual([]);
  });

  it("shows POST /api/ledger/spend a body the ledger accepts", () => {
    const body = exampleBodyOf(service.document, operation("post", "/api/ledger/spend"));
    const parsed = service.schemas.get("ledger::spend")?.safeParse(body);
    expect(parsed?.success, JSON.stringify(parsed?.error?.issues)).toBe(true);
    expect(Object.keys(body as object)).toEqual(
      expect.arrayContaining(["realmId", "agentId", "costCents", "provider", "model"]),
    );
  });

  it("shows the generic webhook a body that fits its request schema", () => {
    const op = operation("post", "/webhook/{channelId}");
    const body = exampleBodyOf(service.document, op);
    expect(problems(body, requestSchemaOf(op), service.document.components?.schemas ?? {})).toEqual([]);
    const declared = service.schemas.get("channel::webhook::inbound");
    expect(declared?.safeParse(body).success ?? true).toBe(true);
  });

  it("synthesizes tool::shell_exec's arguments (a tool, without a route) that the tool accepts", () => {
    const input = service.schemas.get("tool::shell_exec");
    const args = exampleOf(jsonSchemaOf(input, "input"));
    const parsed = input?.safeParse(args);
    expect(parsed?.success, JSON.stringify(parsed?.error?.issues)).toBe(true);
    expect(args).toMatchObject({ agentId: expect.any(String), command: expect.any(String) });
  });
});

/** Simple JSON Schemas: scalars with bounds, enums, arrays of them, objects of them, nullable ones. */
const schemaArbitrary: fc.Arbitrary<Schema> = fc.letrec<{ schema: Schema }>((tie) => ({
  schema: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc
      .record({ minLength: fc.nat(20), extra: fc.nat(20) })
      .map(({ minLength, extra }) => ({ type: "string", minLength, maxLength: minLength + extra })),
    fc.constantFrom<Schema>({ type: "string", format: "date-time" }, { type: "string", format: "uri" }),
    fc
      .record({ low: fc.integer({ min: -1000, max: 1000 }), span: fc.nat(1000), integer: fc.boolean() })
      .map(({ low, span, integer }) => ({
        type: integer ? "integer" : "number",
        minimum: low,
        maximum: low + span,
      })),
    fc.constant<Schema>({ type: "boolean" }),
    fc.array(fc.string(), { minLength: 1, maxLength: 4 }).map((values) => ({ type: "string", enum: values })),
    tie("schema").map((items) => ({ type: "array", items })),
    tie("schema").map((inner) => ({ anyOf: [inner, { type: "null" }] })),
    fc
      .dictionary(
        fc.string({ minLength: 1, maxLength: 8 }).filter((key) => key !== "__proto__"),
        tie("schema"),
        { maxKeys: 6 },
      )
      .chain((properties) =>
        fc.subarray(Object.keys(properties)).map((required) => ({
          type: "object",
          properties,
          required,
          additionalProperties: false,
        })),
      ),
  ),
})).schema;

describe("exampleOf", () => {
  it("meets the types, bounds and required properties of any simple schema", () => {
    fc.assert(
      fc.property(schemaArbitrary, (schema) => {
        expect(problems(exampleOf(schema), schema, {})).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it("uses the schema's own values, formats and names, and stops at cycles", () => {
    expect(exampleOf({ type: "string", examples: ["given"] })).toBe("given");
    expect(exampleOf({ type: "number", default: 7 })).toBe(7);
    expect(exampleOf({ enum: ["b", "c"] })).toBe("b");
    expect(exampleOf({ type: "string", format: "email" })).toBe("user@example.com");
    expect(exampleOf({ type: "object", properties: { realmId: { type: "string" } } })).toEqual({
      realmId: "<realmId>",
    });
    expect(exampleOf({ type: "integer", exclusiveMinimum: 5, maximum: 9 })).toBe(6);
    const components = {
      Node: {
        type: "object",
        properties: {
          name: { type: "string" },
          children: { type: "array", items: { $ref: "#/components/schemas/Node" } },
        },
        required: ["name", "children"],
      },
    };
    expect(exampleOf({ $ref: "#/components/schemas/Node" }, components)).toEqual({
      name: "<name>",
      children: [{}],
    });
  });

  it("leaves optional properties out of an object that has many", () => {
    const properties = Object.fromEntries(
      ["a", "b", "c", "d", "e"].map((name) => [name, { type: "string" }]),
    );
    expect(exampleOf({ type: "object", properties, required: ["c"] })).toEqual({ c: "<c>" });
  });
});

/** README.md and docs/*.md. */
const MARKDOWN = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

/** The relative link targets of a markdown text, outside code blocks and code spans. */
function linkTargets(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
  const inline = [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]);
  const references = [...prose.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((match) => match[1]);
  return [...inline, ...references].filter((target) => !/^([a-z][a-z0-9+.-]*:|#)/i.test(target));
}

describe("links in README.md and docs/*.md", () => {
  it.each(MARKDOWN)("%s: every relative link names a file of this repository", (file) => {
    const base = dirname(join(ROOT, file));
    const broken = linkTargets(readFileSync(join(ROOT, file), "utf8")).filter((target) => {
      const path = decodeURIComponent(target.split("#")[0] as string);
      if (path === "") return false;
      const absolute = resolve(base, path);
      return isAbsolute(path) || relative(ROOT, absolute).startsWith("..") || !existsSync(absolute);
    });
    expect(broken).toEqual([]);
  });

  it("finds links, so that the check above checks something", () => {
    expect(linkTargets("[a](docs/x.md) `[b](c.md)` [c](https://e.com) [d](#x) [e](../y.md#z)")).toEqual([
      "docs/x.md",
      "../y.md#z",
    ]);
  });
});
