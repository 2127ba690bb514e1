import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  applyEdits,
  diagnosticsAnswer,
  editsByUri,
  locationList,
  positionOf,
  symbolsAnswer,
  type TextEdit,
  uriMapping,
} from "../../../../src/workers/tools/code/lsp-protocol.ts";

const range = (line: number, character: number, endLine = line, endCharacter = character) => ({
  start: { line, character },
  end: { line: endLine, character: endCharacter },
});

describe("positionOf", () => {
  const text = "const addAll = 1;\nfunction add(a, b) {}\nadd(1, 2);\n";

  it("turns a 1-based line and column into an LSP position, column 1 when none is given", () => {
    expect(positionOf(text, { line: 2, column: 10 })).toEqual({ line: 1, character: 9 });
    expect(positionOf(text, { line: 3 })).toEqual({ line: 2, character: 0 });
  });

  it("finds a symbol's first whole-word occurrence, not a longer name that starts with it", () => {
    expect(positionOf(text, { symbol: "add" })).toEqual({ line: 1, character: 9 });
    expect(positionOf("let $add = 0;\nadd;", { symbol: "add" })).toEqual({ line: 1, character: 0 });
  });

  it("takes a symbol's characters literally, regular-expression ones included", () => {
    expect(positionOf("x = a+b;\nab", { symbol: "a+b" })).toEqual({ line: 0, character: 4 });
  });

  it("refuses with 400 a symbol the file lacks, or a request with neither line nor symbol", () => {
    expect(() => positionOf(text, { symbol: "sub" })).toThrow("symbol sub does not occur in the file");
    expect(() => positionOf(text, {})).toThrow("give line (and column) or symbol");
  });
});

describe("diagnosticsAnswer", () => {
  it("answers 1-based positions and named severities, error when the server gives none or an unknown one", () => {
    const answer = diagnosticsAnswer([
      { range: range(6, 2), severity: 2, code: 2322, source: "ts", message: "wrong type" },
      { range: range(0, 0), message: "no severity" },
      { range: range(1, 4), severity: 9, message: "odd severity" },
    ]);
    expect(answer).toEqual([
      { line: 7, column: 3, severity: "warning", code: 2322, source: "ts", message: "wrong type" },
      { line: 1, column: 1, severity: "error", code: null, source: null, message: "no severity" },
      { line: 2, column: 5, severity: "error", code: null, source: null, message: "odd severity" },
    ]);
  });
});

describe("symbolsAnswer", () => {
  it("lists nested symbols after their parent, named with it as container, at their selection range", () => {
    const answer = symbolsAnswer([
      {
        name: "Shape",
        kind: 5,
        range: range(0, 0, 9, 1),
        selectionRange: range(0, 6),
        children: [{ name: "area", kind: 6, range: range(1, 2, 3, 3), selectionRange: range(1, 2) }],
      },
      { name: "main", kind: 12, range: range(10, 0) },
    ]);
    expect(answer).toEqual([
      { name: "Shape", kind: "class", line: 1, column: 7, container: null },
      { name: "area", kind: "method", line: 2, column: 3, container: "Shape" },
      { name: "main", kind: "function", line: 11, column: 1, container: null },
    ]);
  });

  it("reads flat symbol information (location and containerName) and names an unknown kind by its number", () => {
    const answer = symbolsAnswer([
      { name: "x", kind: 99, location: { uri: "file:///w/a.py", range: range(4, 8) }, containerName: "C" },
      { name: "nowhere", kind: 13 },
    ]);
    expect(answer).toEqual([
      { name: "x", kind: "99", line: 5, column: 9, container: "C" },
      { name: "nowhere", kind: "variable", line: 1, column: 1, container: null },
    ]);
  });
});

describe("locationList", () => {
  it("makes a list of a null, single or listed answer", () => {
    const location = { uri: "file:///w/a.ts", range: range(0, 0) };
    expect(locationList(null)).toEqual([]);
    expect(locationList(location)).toEqual([location]);
    expect(locationList([location, location])).toEqual([location, location]);
  });
});

describe("editsByUri", () => {
  it("gathers a file's edits from both changes and documentChanges", () => {
    const edit = (newText: string): TextEdit => ({ range: range(0, 0), newText });
    const byUri = editsByUri({
      changes: { "file:///w/a.ts": [edit("1")] },
      documentChanges: [
        { textDocument: { uri: "file:///w/a.ts" }, edits: [edit("2")] },
        { textDocument: { uri: "file:///w/b.ts" }, edits: [edit("3")] },
      ],
    });
    expect(Object.fromEntries(byUri)).toEqual({
      "file:///w/a.ts": [edit("1"), edit("2")],
      "file:///w/b.ts": [edit("3")],
    });
    expect(editsByUri(null).size).toBe(0);
  });
});

describe("applyEdits", () => {
  it("applies edits given in any order, on one line and across lines", () => {
    const text = "import { add } from './a';\nadd(1, add(2, 3));\n";
    const edits = [
      { range: range(1, 0, 1, 3), newText: "sum" },
      { range: range(0, 9, 0, 12), newText: "sum" },
      { range: range(1, 7, 1, 10), newText: "sum" },
    ];
    expect(applyEdits(text, edits)).toBe("import { sum } from './a';\nsum(1, sum(2, 3));\n");
    expect(applyEdits("a\nb\nc", [{ range: range(0, 1, 2, 0), newText: "-" }])).toBe("a-c");
  });

  it("applies a hundred thousand edits at once, as a hostile server may send, in one pass", () => {
    // 20,000 edits on a 20,000-line file took 4 to 9 s on the service's own thread (the server can be the
    // agent's own program: a workspace's TypeScript 7 tsc); five times as many, cubic, would outlast the
    // test's timeout by far. One pass now.
    const text = "x\n".repeat(100_000);
    const edits = Array.from({ length: 100_000 }, (_, line) => ({
      range: range(line, 0, line, 1),
      newText: "y",
    }));
    expect(applyEdits(text, edits)).toBe("y\n".repeat(100_000));
  });

  it("refuses overlapping edits and keeps inserts at one position in reverse order", () => {
    expect(() =>
      applyEdits("abcdef", [
        { range: range(0, 0, 0, 4), newText: "-" },
        { range: range(0, 2, 0, 5), newText: "+" },
      ]),
    ).toThrow(/overlapping edits/);
    expect(
      applyEdits("ab", [
        { range: range(0, 1), newText: "1" },
        { range: range(0, 1), newText: "2" },
      ]),
    ).toBe("a21b");
  });

  it("leaves text unchanged when every edit writes back what its range held", () => {
    const lines = fc.array(fc.string({ unit: fc.constantFrom("a", "b", " ", "é") }), {
      minLength: 1,
      maxLength: 6,
    });
    fc.assert(
      fc.property(lines, fc.array(fc.nat(), { maxLength: 6 }), (textLines, cuts) => {
        const text = textLines.join("\n");
        // Non-overlapping ranges within lines, from sorted cut points of each line.
        const edits: TextEdit[] = textLines.flatMap((line, index) => {
          const points = [...new Set(cuts.map((cut) => cut % (line.length + 1)))].sort((a, b) => a - b);
          return points.slice(1).map((end, i) => ({
            range: range(index, points[i] as number, index, end),
            newText: line.slice(points[i], end),
          }));
        });
        expect(applyEdits(text, edits)).toBe(text);
      }),
    );
  });
});

describe("uriMapping", () => {
  const uris = { host: "file:///srv/agents/ws", server: "file:///workspace" };

  it("maps the workspace's URIs both ways inside whole messages", () => {
    const { toServer, toHost } = uriMapping(uris);
    const message = JSON.stringify({ rootUri: uris.host, uri: `${uris.host}/src/a.ts` });
    expect(JSON.parse(toServer(message))).toEqual({
      rootUri: "file:///workspace",
      uri: "file:///workspace/src/a.ts",
    });
    expect(toHost(toServer(message))).toBe(message);
  });

  it("maps a URI followed by a query, a fragment or the end, but leaves a sibling whose name starts the same", () => {
    const { toServer } = uriMapping(uris);
    expect(toServer(`${uris.host}?x ${uris.host}#y ${uris.host}`)).toBe(
      "file:///workspace?x file:///workspace#y file:///workspace",
    );
    expect(toServer("file:///srv/agents/ws2/a.ts")).toBe("file:///srv/agents/ws2/a.ts");
  });

  it("takes the URIs' characters literally, regular-expression ones included", () => {
    const { toServer } = uriMapping({ host: "file:///tmp/a+b(1)", server: "file:///w" });
    expect(toServer('"file:///tmp/a+b(1)/x"')).toBe('"file:///w/x"');
    expect(toServer('"file:///tmp/aab1/x"')).toBe('"file:///tmp/aab1/x"');
  });
});
