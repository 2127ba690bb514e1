/**
 * The API reference (docs/api-reference.md) written from the service's OpenAPI document: each
 * operation grouped by tag, with its auth, its parameters, its JSON body's fields and an example body
 * synthesized from the body's schema, and the top-level fields of its success answer.
 */
import { exampleOf, resolveRef, type Schema, typeOfSchema } from "./example.ts";

export interface OpenApiDocument {
  info?: { title?: string; version?: string };
  tags?: { name: string }[];
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, unknown> };
}

export interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, unknown>[];
  parameters?: { name: string; in: string; required?: boolean; schema?: Schema; description?: string }[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: Schema }> }>;
}

const METHODS = ["get", "post", "put", "patch", "delete"];

/** Every operation of the document, in path order and then method order. */
export function operationsOf(document: OpenApiDocument): { method: string; path: string; op: Operation }[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({ method, path, op: item[method] })),
  );
}

/** The JSON request body's schema of an operation, if it takes one. */
export function requestSchemaOf(op: Operation): Schema | undefined {
  return op.requestBody?.content?.["application/json"]?.schema;
}

/** The example body the reference shows for an operation (undefined: it takes no JSON body). */
export function exampleBodyOf(document: OpenApiDocument, op: Operation): unknown {
  const schema = requestSchemaOf(op);
  return schema ? exampleOf(schema, document.components?.schemas ?? {}, "body") : undefined;
}

const cell = (text: string) => text.replace(/\s*\n\s*/g, " ").replace(/\|/g, "\\|");

/** A short name for a schema's type: `string`, `integer[]`, `"a" \| "b"`, `Node`, `object`. */
export function typeName(schema: unknown, components: Record<string, unknown> = {}, depth = 0): string {
  if (typeof schema !== "object" || schema === null) return "any";
  const s = schema as Schema;
  if (typeof s.$ref === "string") return s.$ref.split("/").pop() as string;
  if ("const" in s) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return s.enum.map((value) => JSON.stringify(value)).join(" \\| ");
  const branches = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (Array.isArray(branches) && depth < 3) {
    return [...new Set(branches.map((branch) => typeName(branch, components, depth + 1)))].join(" \\| ");
  }
  const type = Array.isArray(s.type) ? (s.type as string[]).join(" \\| ") : typeOfSchema(s);
  if (type === "array" && depth < 3) {
    const item = typeName(s.items, components, depth + 1);
    return item.includes("|") ? `(${item})[]` : `${item}[]`;
  }
  return type ?? "any";
}

function authOf(op: Operation): string {
  if (!op.security || op.security.length === 0) return "none";
  return "API key (`Authorization: Bearer <key>`)";
}

function fieldsTable(schema: Schema, components: Record<string, unknown>): string[] {
  const resolved = resolveRef(schema, components) ?? schema;
  const properties = (resolved.properties ?? {}) as Record<string, Schema>;
  const required = new Set((resolved.required ?? []) as string[]);
  const names = Object.keys(properties);
  if (names.length === 0) return [];
  return [
    "| field | type | required | description |",
    "| ----- | ---- | -------- | ----------- |",
    ...names.map((name) => {
      const property = properties[name];
      const target = resolveRef(property, components) ?? property;
      const fallback = "default" in property ? `default ${JSON.stringify(property.default)}` : "";
      const description = (property.description ?? target.description ?? fallback) as string;
      return `| \`${name}\` | ${cell(typeName(property, components))} | ${required.has(name) ? "yes" : "no"} | ${cell(description)} |`;
    }),
  ];
}

function parametersLine(
  op: Operation,
  where: "path" | "query",
  components: Record<string, unknown>,
): string[] {
  const parameters = (op.parameters ?? []).filter((parameter) => parameter.in === where);
  if (parameters.length === 0) return [];
  const items = parameters.map(
    (parameter) =>
      `\`${parameter.name}\` (${typeName(parameter.schema, components)}${parameter.required ? "" : ", optional"})`,
  );
  return [`${where === "path" ? "Path" : "Query"} parameters: ${items.join(", ")}.`, ""];
}

/** The success answer: its status and its JSON body's top-level fields (or its type, or its media type). */
function answerLines(op: Operation, components: Record<string, unknown>): string[] {
  const statuses = Object.keys(op.responses ?? {}).filter((status) => /^2\d\d$/.test(status));
  return statuses.map((status) => {
    const response = op.responses?.[status] ?? {};
    const content = response.content ?? {};
    const json = content["application/json"]?.schema;
    const head = `Answer ${status} (${cell(response.description ?? "Success")})`;
    if (!json) {
      const types = Object.keys(content);
      return `- ${head}${types.length > 0 ? `: ${types.map((type) => `\`${type}\``).join(", ")}` : ": no body"}`;
    }
    const resolved = resolveRef(json, components) ?? json;
    const properties = (resolved.properties ?? {}) as Record<string, Schema>;
    const names = Object.keys(properties);
    if (typeOfSchema(resolved) !== "object" || names.length === 0) {
      return `- ${head}: ${typeName(json, components)}`;
    }
    const required = new Set((resolved.required ?? []) as string[]);
    const fields = names.map(
      (name) => `\`${name}${required.has(name) ? "" : "?"}\`: ${typeName(properties[name], components)}`,
    );
    return `- ${head}: ${fields.join(", ")}`;
  });
}

function operationSection(document: OpenApiDocument, method: string, path: string, op: Operation): string[] {
  const components = document.components?.schemas ?? {};
  const lines = [`### \`${method.toUpperCase()} ${path}\``, ""];
  const meta = [op.operationId ? `\`${op.operationId}\`` : undefined, `auth: ${authOf(op)}`];
  lines.push(meta.filter(Boolean).join(" · "), "");
  const text = [op.summary, op.description].filter((part) => part && part.trim() !== "").join(". ");
  if (text) lines.push(text, "");
  lines.push(...parametersLine(op, "path", components), ...parametersLine(op, "query", components));
  const body = requestSchemaOf(op);
  if (body) {
    const table = fieldsTable(body, components);
    lines.push(`Body (JSON${op.requestBody?.required ? "" : ", optional"}):`, "");
    if (table.length > 0) lines.push(...table, "");
    lines.push("```json", JSON.stringify(exampleBodyOf(document, op), null, 2), "```", "");
  }
  lines.push(...answerLines(op, components), "");
  return lines;
}

const anchor = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^\w\- ]/g, "")
    .replace(/ /g, "-");

/** The whole reference as markdown. */
export function renderApiReference(document: OpenApiDocument): string {
  const operations = operationsOf(document);
  const tagOf = (op: Operation) => op.tags?.[0] ?? "other";
  const tags = [
    ...new Set([...(document.tags ?? []).map((tag) => tag.name), ...operations.map(({ op }) => tagOf(op))]),
  ].filter((tag) => operations.some(({ op }) => tagOf(op) === tag));
  const lines = [
    "# API reference",
    "",
    "<!-- Generated by `npm run api:reference` from the service's OpenAPI document; do not edit by hand. -->",
    "",
    `Every route of ${document.info?.title ?? "the service"} as \`GET /api/openapi.json\` describes it, grouped`,
    "by domain: its auth, its parameters, its JSON body's fields with an example body, and the top-level",
    "fields of its success answer. Example bodies are synthesized from the body's schema (required fields,",
    "optional ones when there are few); `<name>` stands for a value of yours. Any route may also answer the",
    "errors listed in the README's HTTP contract, as `{error}`. Functions without a route (agent tools such as",
    "`tool::shell_exec`) list their input schemas at `GET /api/functions` (`inputSchema`).",
    "",
    "## Contents",
    "",
    ...tags.map(
      (tag) => `- [${tag}](#${anchor(tag)}) (${operations.filter(({ op }) => tagOf(op) === tag).length})`,
    ),
    "",
  ];
  for (const tag of tags) {
    lines.push(`## ${tag}`, "");
    for (const { method, path, op } of operations.filter(({ op }) => tagOf(op) === tag)) {
      lines.push(...operationSection(document, method, path, op));
    }
  }
  return `${lines
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trimEnd()}\n`;
}
