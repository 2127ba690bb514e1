import { describe, expect, it } from "vitest";
import { importCycles, importsOf, sourceGraph, specifiersOf } from "../../scripts/import-cycles.ts";

/** The worker folder a file belongs to (`src/workers/<name>/…`), if any. */
const workerOf = (file: string) => /^src\/workers\/([^/]+)\//.exec(file)?.[1];

describe("the source tree", () => {
  const graph = sourceGraph();

  it("has no import circles, type-only imports included", () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it("keeps workers apart: no worker imports another worker's files (they talk through the engine)", () => {
    const crossings = [...graph].flatMap(([file, targets]) => {
      const from = workerOf(file);
      return from === undefined
        ? []
        : targets
            .filter((target) => workerOf(target) && workerOf(target) !== from)
            .map((t) => `${file} → ${t}`);
    });
    expect(crossings).toEqual([]);
  });

  it("keeps the layers below the workers free of them (engine, shared, llm, channels know no worker)", () => {
    const upward = [...graph].flatMap(([file, targets]) =>
      /^src\/(engine|shared|llm|channels)\//.test(file) && !file.startsWith("src/engine/generated/")
        ? targets.filter((target) => target.startsWith("src/workers/")).map((t) => `${file} → ${t}`)
        : [],
    );
    expect(upward).toEqual([]);
  });
});

describe("importCycles", () => {
  it("finds a circle through type-only and re-exports, and nothing in a tree", () => {
    const graph = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts"]],
      ["d.ts", ["a.ts"]],
      ["e.ts", ["e.ts"]],
    ]);
    expect(importCycles(graph)).toEqual([["a.ts", "b.ts", "c.ts"], ["e.ts"]]);
    expect(
      importCycles(
        new Map([
          ["x.ts", ["y.ts"]],
          ["y.ts", []],
        ]),
      ),
    ).toEqual([]);
  });

  it("reads every form of import: named, type-only, re-export, side effect and dynamic", () => {
    const text = [
      'import { a } from "./a.ts";',
      'import type {\n  B,\n} from "./b.ts";',
      'export { c } from "./c.ts";',
      'import "./d.ts";',
      'const e = await import("./e.ts");',
      'import { z } from "zod";',
      '// a comment naming from "./not-an-import.ts" is not read as one',
    ].join("\n");
    expect(specifiersOf(text)).toEqual(["./a.ts", "./b.ts", "./c.ts", "./d.ts", "./e.ts", "zod"]);
    expect(importsOf("src/engine/call.ts")).toEqual([
      "src/engine/generated/functions.ts",
      "src/engine/types.ts",
    ]);
  });
});
