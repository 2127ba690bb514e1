import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatCsv, parseCsv } from "../../../src/workers/tools/formats/csv.ts";
import { jq } from "../../../src/workers/tools/formats/jq.ts";
import { testRegex } from "../../../src/workers/tools/formats/regex.ts";
import { buildSql, sqlInput } from "../../../src/workers/tools/formats/sql.ts";
import { workspaceDir } from "../../../src/workers/tools/sandbox.ts";
import { toolsServer } from "./setup.ts";

const env = toolsServer();

describe("jq expressions", () => {
  const data = {
    items: [
      { name: "a", price: 5, tags: ["x"] },
      { name: "b", price: 15, tags: [] },
      { name: "c", price: 25, tags: ["x", "y"] },
    ],
  };

  it("answers as jq does for paths, filters, construction and builtins", () => {
    expect(jq(".items[0].name", data)).toEqual(["a"]);
    expect(jq("[.items[] | select(.price > 10) | .name]", data)).toEqual([["b", "c"]]);
    expect(jq(".items | map(.price) | add", data)).toEqual([45]);
    expect(jq(".items | length", data)).toEqual([3]);
    expect(jq("[.items[] | {n: .name, count: (.tags | length)}]", data)).toEqual([
      [
        { n: "a", count: 1 },
        { n: "b", count: 0 },
        { n: "c", count: 2 },
      ],
    ]);
    expect(jq(".items | sort_by(-.price) | .[0].name", data)).toEqual(["c"]);
    expect(jq('.missing // "default"', data)).toEqual(["default"]);
    expect(jq(".items[1:] | map(.name)", data)).toEqual([["b", "c"]]);
    expect(jq(".items[] | .name", data)).toEqual(["a", "b", "c"]);
    expect(jq("[.items[].tags[]] | unique", data)).toEqual([["x", "y"]]);
    expect(jq(".items | group_by(.tags | length > 0) | map(length)", data)).toEqual([[1, 2]]);
    expect(jq("keys", data)).toEqual([["items"]]);
    expect(jq('.items[0] | to_entries | map(.key) | join(",")', data)).toEqual(["name,price,tags"]);
    expect(jq('.items[] | select(.name == "b" and .price >= 15) | .price * 2', data)).toEqual([30]);
  });

  it("names what is wrong with a bad expression", () => {
    expect(() => jq(".items[", data)).toThrow(/expression/);
    expect(() => jq("nosuch(1)", data)).toThrow(/unknown function nosuch/);
    expect(() => jq(".items.name", data)).toThrow(/cannot index array with string/);
    expect(() => jq("[range(1000000000)]", data)).toThrow(/limited/);
  });

  it("a path of keys picks exactly the nested value (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[a-z][a-z0-9_]{0,6}$/), { minLength: 1, maxLength: 5 }),
        fc.jsonValue(),
        (keys, leaf) => {
          const value = keys.reduceRight<unknown>((inner, key) => ({ [key]: inner }), leaf);
          // Compared as JSON text: the tool's output is JSON, where -0 and 0 are one number.
          expect(JSON.stringify(jq(keys.map((key) => `.${key}`).join(""), value))).toBe(
            JSON.stringify([leaf ?? null]),
          );
        },
      ),
    );
  });

  it("select keeps exactly the items the condition holds for (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -100, max: 100 }), { maxLength: 50 }),
        fc.integer({ min: -100, max: 100 }),
        (numbers, limit) => {
          expect(jq(`[.[] | select(. > ${limit})]`, numbers)).toEqual([numbers.filter((n) => n > limit)]);
        },
      ),
    );
  });
});

describe("jq's limits", () => {
  it("refuses a value that doubles past its weight limit, however cheaply it shares its parts", () => {
    // 2^30 copies of the input as JSON: refused at about 2^20, in microseconds, not built and written out.
    const doubling = Array.from({ length: 30 }, () => "[.,.]").join("|");
    expect(() => jq(doubling, "x")).toThrow(/built a value of more than 10000000 bytes/);
    expect(() => jq(`${doubling}|tostring`, "x")).toThrow(/built a value/);
    const strings = Array.from({ length: 40 }, () => ".+.").join("|");
    expect(() => jq(strings, "xx")).toThrow(/built a value|went past a limit/);
  });

  it("refuses outputs that together weigh past the limit, though each is under it", () => {
    // A 9 MB string, then 100 outputs of it: 900 MB as JSON from one short expression; with
    // ascii_downcase after a third (.,.,…) the service ran out of memory and died.
    const big = `[range(20000)] | map(tostring) | join("") | [${Array(100).fill(".").join(",")}] | join("")`;
    const tenfold = "(.,.,.,.,.,.,.,.,.,.)";
    expect(jq(`${big} | length`, null)[0]).toBeGreaterThan(8_000_000);
    expect(() => jq(`${big} | ${tenfold} | ${tenfold}`, null)).toThrow(/more than \d+ bytes/);
    expect(() => jq(`${big} | ${tenfold} | ${tenfold} | ${tenfold} | ascii_downcase`, null)).toThrow(
      /more than \d+ bytes/,
    );
  });

  it("refuses an expression nested past the parser's stack with a 400, not a 500", async () => {
    const nested = `${"(".repeat(4990)}.${")".repeat(4990)}`;
    expect(() => jq(nested, {})).toThrow(/expression went past a limit/);
    expect(
      await env.failure("tool::json_transform", {
        data: {},
        expression: `${"[".repeat(4990)}${"]".repeat(4990)}`,
      }),
    ).toMatchObject({ status: 400 });
  });

  it("still builds what stays under the limit", () => {
    const doubling = Array.from({ length: 10 }, () => "[.,.]").join("|");
    expect(JSON.stringify(jq(doubling, 1)).length).toBeGreaterThan(2000);
  });
});

describe("CSV", () => {
  it("parses quotes, doubled quotes, delimiters and line breaks inside quotes", () => {
    expect(parseCsv('a,"b,c","d ""q"""\r\n"multi\nline",x,\n')).toEqual([
      ["a", "b,c", 'd "q"'],
      ["multi\nline", "x", ""],
    ]);
    expect(() => parseCsv('a,"open\nb')).toThrow(/opened on line 1 is never closed/);
    expect(() => parseCsv('"a"b')).toThrow(/text after a closing quote/);
  });

  it("reads back what it writes, whatever the fields hold (property)", () => {
    const field = fc.string({
      unit: fc.constantFrom("a", "b", ",", '"', "\n", "\r\n", " ", ";"),
      maxLength: 8,
    });
    fc.assert(
      fc.property(
        fc.array(fc.array(field, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 10 }),
        fc.constantFrom(",", ";", "\t"),
        (rows, delimiter) => {
          expect(parseCsv(formatCsv(rows, delimiter), delimiter)).toEqual(rows);
        },
      ),
    );
  });

  it("gives header rows as objects through the tool", async () => {
    const parsed = await env.tool("tool::csv_parse", { text: "name,age\nann,31\nbob,\n" });
    expect(parsed).toEqual({
      columns: ["name", "age"],
      rows: [
        { name: "ann", age: "31" },
        { name: "bob", age: "" },
      ],
    });
  });

  it("refuses header rows whose objects would dwarf the text, instead of building them", async () => {
    // 2000 names and 2000 empty lines (13 kB): 4 million cells, and each row repeats every name.
    const text = `${Array.from({ length: 2000 }, (_, k) => `column${k}`).join(",")}${"\n".repeat(2000)}`;
    const failure = await env.failure("tool::csv_parse", { text });
    expect(failure).toMatchObject({ status: 400, message: expect.stringMatching(/header: false/) });
    expect(await env.tool("tool::csv_parse", { text, header: false })).toMatchObject({
      rows: expect.any(Array),
    });
  });
});

describe("regular expressions", () => {
  it("lists matches with groups", () => {
    expect(testRegex({ pattern: "(\\w)(\\d)", flags: "g", text: "a1 b2", timeoutMs: 1000 })).toMatchObject({
      count: 2,
      matches: [
        { match: "a1", index: 0, groups: ["a", "1"] },
        { match: "b2", index: 3 },
      ],
    });
  });

  it("refuses matches whose captures together hold more than the limit", () => {
    // A lookahead captures the rest of the text at each of 1000 positions: 20 kB of text, 20 MB of answer.
    expect(() =>
      testRegex({ pattern: "(?=([\\s\\S]*))", flags: "g", text: "x".repeat(20_000), timeoutMs: 5000 }),
    ).toThrow(/more than 10000000 characters/);
    expect(testRegex({ pattern: "x+", flags: "g", text: "x".repeat(20_000), timeoutMs: 5000 }).count).toBe(1);
  });

  it("stops a catastrophically backtracking pattern at its time limit", () => {
    const started = Date.now();
    expect(() =>
      testRegex({ pattern: "(a+)+$", flags: "", text: `${"a".repeat(40)}b`, timeoutMs: 200 }),
    ).toThrow(/longer than 200 ms/);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(() => testRegex({ pattern: "(", flags: "", text: "", timeoutMs: 100 })).toThrow(
      /Invalid regular expression/,
    );
  });
});

describe("the other data tools", () => {
  it("parses YAML and names the line of an error", async () => {
    expect(await env.tool("tool::yaml_parse", { text: "a: 1\nb: [x, y]\n" })).toEqual({
      value: { a: 1, b: ["x", "y"] },
    });
    expect((await env.failure("tool::yaml_parse", { text: "a: [1,\n" })).message).toMatch(/^YAML: .*line/);
  });

  it("refuses a YAML alias bomb", async () => {
    const bomb = [
      "a: &a [x,x,x,x,x,x,x,x,x]",
      ...Array.from(
        { length: 8 },
        (_, k) =>
          `${String.fromCharCode(98 + k)}: &${String.fromCharCode(98 + k)} [${Array(9)
            .fill(`*${String.fromCharCode(97 + k)}`)
            .join(",")}]`,
      ),
    ].join("\n");
    expect((await env.failure("tool::yaml_parse", { text: bomb })).status).toBe(400);
  });

  it("refuses a large YAML anchor named by many aliases, which would be written out each time", async () => {
    const text = `a: &a "${"x".repeat(100_000)}"\nb: [${Array(999).fill("*a").join(",")}]\n`;
    const failure = await env.failure("tool::yaml_parse", { text });
    expect(failure).toMatchObject({ status: 400, message: expect.stringMatching(/weighs more than/) });
    const small = `a: &a "${"x".repeat(100)}"\nb: [${Array(999).fill("*a").join(",")}]\n`;
    expect(await env.tool("tool::yaml_parse", { text: small })).toMatchObject({
      value: { a: "x".repeat(100) },
    });
  });

  it("parses YAML off the service's thread: a large mapping leaves it answering meanwhile", async () => {
    // 15,000 keys (150 kB): the duplicate-key check compares each key with every other, for seconds (25,000
    // passed the parse's 10 s limit on a loaded CI machine). On the service's thread nothing else ran
    // meanwhile, not even a callback queued before the call.
    const text = Array.from({ length: 15_000 }, (_, k) => `key${k}: value`).join("\n");
    let ranMeanwhile = false;
    setImmediate(() => {
      ranMeanwhile = true;
    });
    const parsed = await env.tool<{ value: Record<string, string> }>("tool::yaml_parse", { text });
    expect(Object.keys(parsed.value)).toHaveLength(15_000);
    expect(ranMeanwhile).toBe(true);
    expect((await env.failure("tool::yaml_parse", { text: "a: 1\na: 2\n" })).message).toMatch(/unique/);
  });

  it("hashes text and workspace files, and makes UUIDs", async () => {
    const { agentId } = await env.agent();
    expect(await env.tool("tool::hash_compute", { text: "abc" })).toEqual({
      algorithm: "sha256",
      hash: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    });
    await env.tool("tool::file_write", { path: "f", content: "abc" });
    expect(await env.tool("tool::hash_compute", { agentId, path: "f", algorithm: "md5" })).toEqual({
      algorithm: "md5",
      hash: "900150983cd24fb0d6963f7d28e17f72",
    });
    const { uuids } = await env.tool<{ uuids: string[] }>("tool::uuid_generate", { count: 3 });
    expect(new Set(uuids).size).toBe(3);
  });

  it("hashes a large file a chunk at a time, ten calls at once, each to the whole file's digest", async () => {
    const { agentId } = await env.agent();
    await env.tool("tool::file_write", { path: "f", content: "abc" });
    const bytes = Buffer.alloc(50_000_000);
    for (let k = 0; k < bytes.length; k += 4093) bytes[k] = k % 251;
    writeFileSync(join(workspaceDir(env.server.dataDir, agentId), "big.bin"), bytes);
    const expected = createHash("sha256").update(bytes).digest("hex");
    // Each call read the whole file into memory (ten at once on 99 MB: 2.2 GB); now 4 MB at a time, the
    // digest the same across the chunks' seams (measured by script: 473 MB for the same ten).
    const hashes = await Promise.all(
      Array.from({ length: 10 }, () =>
        env.tool<{ hash: string }>("tool::hash_compute", { agentId, path: "big.bin" }),
      ),
    );
    expect(hashes.map((answer) => answer.hash)).toEqual(Array(10).fill(expected));
  });

  it("builds parameterised SQL and never puts a value in the text", () => {
    const input = sqlInput.parse({
      operation: "select",
      table: "users",
      columns: ["id", "name"],
      where: { name: "x'; DROP TABLE users; --", age: { op: ">", value: 3 } },
      orderBy: [{ column: "id" }],
      limit: 10,
    });
    expect(buildSql(input)).toEqual({
      sql: 'SELECT "id", "name" FROM "users" WHERE "name" = $1 AND "age" > $2 ORDER BY "id" ASC LIMIT 10',
      params: ["x'; DROP TABLE users; --", 3],
    });
    expect(() => buildSql(sqlInput.parse({ operation: "delete", table: "users" }))).toThrow(/without where/);
    expect(sqlInput.safeParse({ operation: "select", table: "users; drop" }).success).toBe(false);
  });
});
