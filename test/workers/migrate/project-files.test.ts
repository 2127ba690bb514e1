import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MigrationInputError } from "../../../src/workers/migrate/model.ts";
import { listDirectory, readJsonFile } from "../../../src/workers/migrate/project-files.ts";

const dir = mkdtempSync(join(tmpdir(), "agentos-project-files-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("listDirectory", () => {
  it("lists a directory's entries sorted, and nothing for a directory that does not exist", () => {
    for (const name of ["b.json", "a.json", "c"]) writeFileSync(join(dir, name), "{}");
    mkdirSync(join(dir, "sub"));
    expect(listDirectory(dir)).toEqual(["a.json", "b.json", "c", "sub"]);
    expect(listDirectory(join(dir, "missing"))).toEqual([]);
  });
});

describe("readJsonFile", () => {
  it("reads a JSON file", () => {
    writeFileSync(join(dir, "ok.json"), '{"graphs": {"agent": "./agent.py:graph"}}');
    expect(readJsonFile(join(dir, "ok.json"))).toEqual({ graphs: { agent: "./agent.py:graph" } });
  });

  it("refuses invalid JSON naming the file and the line of the error", () => {
    const file = join(dir, "broken.json");
    // A trailing comma: the parser names the position, here the closing brace on line 4.
    writeFileSync(file, '{\n  "a": 1,\n  "b": 2,\n}');
    let thrown: unknown;
    try {
      readJsonFile(file);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(MigrationInputError);
    expect(thrown).toMatchObject({ line: 4 });
    expect(String((thrown as Error).message)).toMatch(/is not valid JSON/);
  });
});
