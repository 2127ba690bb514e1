import { createHash, randomUUID } from "node:crypto";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { badRequest } from "../../../shared/errors.ts";
import { agentIdField, pathField } from "../fields.ts";
import { existingInside } from "../sandbox.ts";
import { defineTool } from "../tool.ts";
import { readInside } from "../workspace-fs.ts";
import { parseCsv } from "./csv.ts";
import { jq } from "./jq.ts";
import { testRegex } from "./regex.ts";
import { buildSql, sqlInput } from "./sql.ts";

const MAX_TEXT = 5_000_000;
const textField = (what: string) =>
  z.string().max(MAX_TEXT, `${what} must be at most ${MAX_TEXT} characters`);

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw badRequest(`data is not valid JSON: ${(error as Error).message}`);
  }
}

const jsonTransform = defineTool({
  id: "tool::json_transform",
  description:
    "Run a jq expression over JSON: paths (.a.b, .[0], .[], .[1:3]), pipes |, select(.x > 1), map(f), sort_by(f), group_by(f), keys, length, add, {name: .n}, [ ... ], // defaults and more. data is JSON text or a value. {results: every output}.",
  input: z.strictObject({
    data: z.unknown().describe("The JSON input (a JSON text or any value)"),
    expression: z
      .string()
      .min(1)
      .max(10_000)
      .describe("jq expression, e.g. [.items[] | select(.price > 10) | .name]"),
  }),
  run: ({ data, expression }) => ({
    results: jq(expression, typeof data === "string" ? parseJson(data) : data),
  }),
});

const csvParse = defineTool({
  id: "tool::csv_parse",
  description:
    "Parse CSV (RFC 4180: quoted fields, doubled quotes, line breaks inside quotes). header: true (default) gives {columns, rows: [objects]}, false gives {rows: [arrays]}.",
  input: z.strictObject({
    text: textField("text"),
    delimiter: z.string().length(1, "delimiter must be one character").default(","),
    header: z.boolean().default(true),
  }),
  run: ({ text, delimiter, header }) => {
    if (delimiter === '"' || delimiter === "\n" || delimiter === "\r")
      throw badRequest("delimiter cannot be a quote or a line break");
    const rows = parseCsv(text, delimiter);
    if (!header) return { rows };
    const [columns = [], ...data] = rows;
    return {
      columns,
      rows: data.map((row) => Object.fromEntries(columns.map((column, k) => [column, row[k] ?? null]))),
    };
  },
});

const yamlParse = defineTool({
  id: "tool::yaml_parse",
  description: "Parse YAML (1.2, anchors included) into JSON: {value}. Errors name the line and column.",
  input: z.strictObject({ text: textField("text") }),
  run: ({ text }) => {
    try {
      return { value: parseYaml(text, { maxAliasCount: 1000, prettyErrors: true }) ?? null };
    } catch (error) {
      throw badRequest(`YAML: ${(error as Error).message.split("\n")[0]}`);
    }
  },
});

const regexTest = defineTool({
  id: "tool::regex_test",
  description:
    "Test a JavaScript regular expression against text: {matches: [{match, index, groups}], count}. flags like g, i, m, s, u; runs for at most timeoutMs (a pattern that backtracks forever is stopped).",
  input: z.strictObject({
    pattern: z.string().min(1).max(10_000),
    flags: z
      .string()
      .regex(/^[dgimsuvy]*$/, "flags may be d, g, i, m, s, u, v, y")
      .default(""),
    text: textField("text"),
    timeoutMs: z.number().int().min(10).max(5000).default(1000),
  }),
  run: (input) => testRegex(input),
});

const uuidGenerate = defineTool({
  id: "tool::uuid_generate",
  description: "Random UUIDs (version 4): {uuids}.",
  input: z.strictObject({ count: z.number().int().min(1).max(1000).default(1) }),
  run: ({ count }) => ({ uuids: Array.from({ length: count }, () => randomUUID()) }),
});

const hashCompute = defineTool({
  id: "tool::hash_compute",
  actsFor: "agent",
  description: "Hash text, or a file of your workspace (agentId + path): {algorithm, hash} in hex or base64.",
  input: z
    .strictObject({
      algorithm: z.enum(["sha256", "sha512", "sha1", "md5"]).default("sha256"),
      text: textField("text").optional(),
      agentId: agentIdField.optional(),
      path: pathField().optional(),
      encoding: z.enum(["hex", "base64"]).default("hex"),
    })
    .refine((input) => (input.text === undefined) !== (input.path === undefined), "give either text or path"),
  async run({ algorithm, text, agentId, path, encoding }, ctx) {
    let bytes: Buffer | string = text ?? "";
    if (path !== undefined) {
      if (!agentId) throw badRequest("path needs agentId");
      const root = await ctx.workspace(agentId);
      bytes = await readInside(root, await existingInside(root, path));
    }
    return { algorithm, hash: createHash(algorithm).update(bytes).digest(encoding) };
  },
});

const sqlBuild = defineTool({
  id: "tool::sql_build",
  description:
    "Build a parameterised SQL statement (never executed): select, insert, update or delete with quoted identifiers and placeholders for every value. {sql, params}.",
  input: sqlInput,
  run: (input) => buildSql(input),
});

export const dataTools = [jsonTransform, csvParse, yamlParse, regexTest, uuidGenerate, hashCompute, sqlBuild];
