/** Longest-common-subsequence line diff, written as a unified diff with `context` lines around changes. */
export function unifiedDiff(before: string, after: string, path: string, context = 3): string {
  const a = splitLines(before);
  const b = splitLines(after);
  const ops = lineOps(a, b);
  if (ops.every((op) => op.mark === " ")) return "";
  const out = [`--- a/${path}`, `+++ b/${path}`];
  let i = 0;
  while (i < ops.length) {
    if ((ops[i] as Op).mark === " ") {
      i++;
      continue;
    }
    const start = Math.max(0, i - context);
    let end = i;
    // Extend the hunk while the next change is within 2 × context lines.
    for (;;) {
      while (end < ops.length && (ops[end] as Op).mark !== " ") end++;
      let next = end;
      while (next < ops.length && (ops[next] as Op).mark === " ") next++;
      if (next < ops.length && next - end <= 2 * context) end = next;
      else break;
    }
    end = Math.min(ops.length, end + context);
    const slice = ops.slice(start, end);
    const first = slice[0] as Op;
    const oldCount = slice.filter((op) => op.mark !== "+").length;
    const newCount = slice.filter((op) => op.mark !== "-").length;
    out.push(
      `@@ -${oldCount === 0 ? first.oldLine : first.oldLine + 1},${oldCount} +${newCount === 0 ? first.newLine : first.newLine + 1},${newCount} @@`,
    );
    for (const op of slice) out.push(`${op.mark}${op.text}`);
    i = end;
  }
  return `${out.join("\n")}\n`;
}

interface Op {
  mark: " " | "-" | "+";
  text: string;
  /** Lines of each side before this one. */
  oldLine: number;
  newLine: number;
}

const MAX_TABLE_CELLS = 4_000_000;

/** With the LCS table: a deletion keeps at least as long a common subsequence as an insertion. */
function deleteFirst(table: Uint32Array[], x: number, y: number): boolean {
  if (table.length === 0) return true;
  return ((table[x + 1] as Uint32Array)[y] as number) >= ((table[x] as Uint32Array)[y + 1] as number);
}

function splitLines(text: string): string[] {
  return text === "" ? [] : text.replace(/\n$/, "").split("\n");
}

function lineOps(a: string[], b: string[]): Op[] {
  // Common prefix and suffix first: most edits are small, so the table stays small.
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (
    suffix < a.length - prefix &&
    suffix < b.length - prefix &&
    a[a.length - 1 - suffix] === b[b.length - 1 - suffix]
  )
    suffix++;
  const midA = a.slice(prefix, a.length - suffix);
  const midB = b.slice(prefix, b.length - suffix);
  // Past this size the table would take too much memory: the middle is then replaced as a whole.
  const exact = midA.length * midB.length <= MAX_TABLE_CELLS;
  const table: Uint32Array[] = exact
    ? Array.from({ length: midA.length + 1 }, () => new Uint32Array(midB.length + 1))
    : [];
  if (exact)
    for (let x = midA.length - 1; x >= 0; x--) {
      const row = table[x] as Uint32Array;
      const below = table[x + 1] as Uint32Array;
      for (let y = midB.length - 1; y >= 0; y--) {
        row[y] =
          midA[x] === midB[y]
            ? (below[y + 1] as number) + 1
            : Math.max(below[y] as number, row[y + 1] as number);
      }
    }
  const ops: Op[] = [];
  let oldLine = 0;
  let newLine = 0;
  const push = (mark: Op["mark"], text: string) => {
    ops.push({ mark, text, oldLine, newLine });
    if (mark !== "+") oldLine++;
    if (mark !== "-") newLine++;
  };
  for (let k = 0; k < prefix; k++) push(" ", a[k] as string);
  let x = 0;
  let y = 0;
  while (x < midA.length || y < midB.length) {
    if (table.length > 0 && x < midA.length && y < midB.length && midA[x] === midB[y]) {
      push(" ", midA[x++] as string);
      y++;
    } else if (x < midA.length && (y === midB.length || deleteFirst(table, x, y))) {
      push("-", midA[x++] as string);
    } else push("+", midB[y++] as string);
  }
  for (let k = a.length - suffix; k < a.length; k++) push(" ", a[k] as string);
  return ops;
}
