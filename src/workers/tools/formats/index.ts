import { createHash, randomUUID } from "node:crypto";
import { z } from "zod";
import { badRequest } from "../../../shared/errors.ts";
import { agentIdField, pathField } from "../fields.ts";
import { existingInside } from "../sandbox.ts";
import { defineTool } from "../tool.ts";
import { readRangeInside } from "../workspace-fs.ts";
import { parseCsv } from "./csv.ts";
import { jq } from "./jq.ts";
import { testRegex } from "./regex.ts";
import { buildSql, sqlInput } from "./sql.ts";
import { jsonWeight } from "./weight.ts";
import { parseYaml } from "./yaml.ts";

const MAX_TEXT = 5_000_000;
/**
 * The most a parsed answer may weigh as JSON. What these tools answer can be far larger than what they
 * read: a YAML anchor named by a thousand aliases is written out a thousand times, and every CSV row
 * repeats the header's names (a header of 4000 columns over 4000 empty lines, 27 kB, was 16 million
 * cells built on the service's own thread for seconds).
 */
const MAX_PARSED_WEIGHT = 10 * MAX_TEXT;
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
    const rowWeight = columns.reduce((total, column) => total + column.length + 12, 2);
    if (data.length * rowWeight > MAX_PARSED_WEIGHT)
      throw badRequest(
        `CSV: ${data.length} rows of ${columns.length} columns as objects would weigh more than ${MAX_PARSED_WEIGHT} bytes as JSON: use header: false`,
      );
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
  run: async ({ text }) => {
    const value = await parseYaml(text);
    // maxAliasCount bounds aliases, not what they name: a large anchor aliased a thousand times.
    if (jsonWeight(value, MAX_PARSED_WEIGHT) > MAX_PARSED_WEIGHT)
      throw badRequest(
        `YAML: its value, aliases written out, weighs more than ${MAX_PARSED_WEIGHT} bytes as JSON`,
      );
    return { value };
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

const HASH_CHUNK_BYTES = 4 * 1024 * 1024;
const MAX_HASHED_BYTES = 100_000_000;

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
    const hash = createHash(algorithm);
    if (path !== undefined) {
      if (!agentId) throw badRequest("path needs agentId");
      const root = await ctx.workspace(agentId);
      const full = await existingInside(root, path);
      // A chunk at a time: a whole file held in memory per call let a burst of calls on one large
      // file take gigabytes, and hashing it at once held the service's thread.
      for (let offset = 0; ; ) {
        const { bytes, size } = await readRangeInside(root, full, offset, HASH_CHUNK_BYTES);
        if (size > MAX_HASHED_BYTES) throw badRequest(`${path} is larger than ${MAX_HASHED_BYTES} bytes`);
        hash.update(bytes);
        offset += bytes.length;
        if (bytes.length === 0 || offset >= size) break;
      }
    } else hash.update(text ?? "");
    return { algorithm, hash: hash.digest(encoding) };
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
