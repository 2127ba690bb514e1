import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { unifiedDiff } from "../../../src/workers/tools/files/diff.ts";
import { applyHashlineEdits, hashlines, lineHash } from "../../../src/workers/tools/files/hashline.ts";
import { applyHunks, parseUnifiedDiff } from "../../../src/workers/tools/files/patch.ts";

// Few distinct lines, so texts share lines and the diff has real context to verify.
const text = fc
  .array(fc.constantFrom("a", "b", "c", "", "  d", "e;"), { maxLength: 30 })
  .map((lines) => (lines.length ? `${lines.join("\n")}\n` : ""));

const apply = (before: string, patch: string) => {
  const [file] = parseUnifiedDiff(patch);
  return applyHunks(before, file?.hunks ?? [], "f");
};

describe("unified diffs", () => {
  it("a diff of two texts applied to the first gives the second (property)", () => {
    fc.assert(
      fc.property(text, text, (before, after) => {
        const patch = unifiedDiff(before, after, "f");
        if (before === after) expect(patch).toBe("");
        else expect(apply(before, patch)).toBe(after);
      }),
      { numRuns: 500 },
    );
  });

  it("a diff applied to a text whose changed lines differ is refused, never misapplied (property)", () => {
    fc.assert(
      fc.property(text, text, fc.nat(), (before, after, pick) => {
        const patch = unifiedDiff(before, after, "f");
        const lines = before.split("\n").slice(0, -1);
        if (patch === "" || lines.length === 0) return;
        // Replace every line by one that appears in no hunk: the patch must not apply anywhere.
        const altered = `${lines.map((_, k) => `zz${k + (pick % 3)}`).join("\n")}\n`;
        const removedOrContext = parseUnifiedDiff(patch).flatMap((f) =>
          f.hunks.flatMap((h) => h.lines.filter((l) => l.mark !== "+")),
        );
        if (removedOrContext.length === 0) return;
        expect(() => apply(altered, patch)).toThrow(/does not apply/);
      }),
      { numRuns: 300 },
    );
  });

  it("finds a hunk whose lines moved, as patch does", () => {
    const patch = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n-y\n+Y\n";
    expect(apply("new\nlines\nx\ny\n", patch)).toBe("new\nlines\nx\nY\n");
  });
});

describe("hash-anchored lines", () => {
  it("edits by line and hash, bottom-up, and refuses a stale hash (property)", () => {
    fc.assert(
      fc.property(text, fc.nat(), (content, pick) => {
        const lines = hashlines(content);
        if (lines.length === 0) return;
        const line = (pick % lines.length) + 1;
        const original = content.split("\n")[line - 1] as string;
        const edited = applyHashlineEdits(
          content,
          [{ line, hash: lineHash(original), op: "replace", content: "NEW" }],
          "f",
        );
        expect(edited.split("\n")[line - 1]).toBe("NEW");
        expect(() =>
          applyHashlineEdits(edited, [{ line, hash: lineHash(original), op: "delete" }], "f"),
        ).toThrow(/changed since it was read/);
      }),
    );
  });
});
