import { badRequest } from "../../../shared/errors.ts";

export interface Hunk {
  oldStart: number;
  /** The hunk's lines with their marks: ' ' context, '-' removed, '+' added. */
  lines: Array<{ mark: " " | "-" | "+"; text: string }>;
}

export interface FilePatch {
  /** null for /dev/null (a created or deleted file). */
  oldPath: string | null;
  newPath: string | null;
  hunks: Hunk[];
}

const stripPrefix = (raw: string): string | null => {
  const path = raw.split("\t")[0]?.trim() ?? "";
  if (path === "/dev/null") return null;
  return path.replace(/^[ab]\//, "");
};

/** A unified diff (one or more files, as `diff -u` or `git diff` writes it) into file patches. */
export function parseUnifiedDiff(text: string): FilePatch[] {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  const files: FilePatch[] = [];
  let current: FilePatch | undefined;
  let hunk: Hunk | undefined;
  let oldLeft = 0;
  let newLeft = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.startsWith("--- ") && lines[i + 1]?.startsWith("+++ ")) {
      current = {
        oldPath: stripPrefix(line.slice(4)),
        newPath: stripPrefix((lines[i + 1] as string).slice(4)),
        hunks: [],
      };
      files.push(current);
      hunk = undefined;
      i++;
      continue;
    }
    const header = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (header) {
      if (!current) throw badRequest(`patch line ${i + 1}: a hunk before any "---/+++" file header`);
      hunk = { oldStart: Number(header[1]), lines: [] };
      oldLeft = header[2] === undefined ? 1 : Number(header[2]);
      newLeft = header[4] === undefined ? 1 : Number(header[4]);
      current.hunks.push(hunk);
      continue;
    }
    if (!hunk) continue;
    if (line.startsWith("\\")) continue; // "\ No newline at end of file"
    if (oldLeft <= 0 && newLeft <= 0) {
      hunk = undefined;
      continue;
    }
    // Some editors strip the space of an empty context line.
    const mark = line === "" ? " " : line[0];
    if (mark !== " " && mark !== "-" && mark !== "+") {
      throw badRequest(
        `patch line ${i + 1}: hunk ends early (expected ${oldLeft} more old and ${newLeft} more new lines)`,
      );
    }
    hunk.lines.push({ mark, text: line.slice(1) });
    if (mark !== "+") oldLeft--;
    if (mark !== "-") newLeft--;
  }
  if (hunk && (oldLeft > 0 || newLeft > 0)) throw badRequest("patch ends in the middle of a hunk");
  if (files.length === 0) throw badRequest('patch has no file headers ("--- a/path" and "+++ b/path")');
  for (const file of files) {
    if (file.hunks.length === 0) throw badRequest(`patch for ${file.newPath ?? file.oldPath} has no hunks`);
  }
  return files;
}

/**
 * Applies the hunks to `original`, verifying every context and removed line. A hunk is looked for at its
 * stated line first, then at the nearest offset where all its old lines match exactly (as `patch` does
 * with fuzz 0); a hunk that matches nowhere fails with the first line that differs at its stated place.
 */
export function applyHunks(original: string, hunks: Hunk[], path: string): string {
  const trailingNewline = original === "" || original.endsWith("\n");
  const lines = original === "" ? [] : original.replace(/\n$/, "").split("\n");
  let shift = 0;
  let floor = 0;
  hunks.forEach((hunk, index) => {
    const old = hunk.lines.filter((line) => line.mark !== "+").map((line) => line.text);
    const added = hunk.lines.filter((line) => line.mark !== "-").map((line) => line.text);
    // "-N,0" inserts after line N; otherwise the hunk's old lines start at line N.
    const stated = Math.max(0, (old.length === 0 ? hunk.oldStart : hunk.oldStart - 1) + shift);
    const at = findBlock(lines, old, stated, floor);
    if (at < 0) throw mismatch(lines, old, stated, index + 1, path);
    lines.splice(at, old.length, ...added);
    shift += added.length - old.length + (at - stated);
    floor = at + added.length;
  });
  const text = lines.join("\n");
  return lines.length > 0 && trailingNewline ? `${text}\n` : text;
}

function findBlock(lines: string[], block: string[], stated: number, floor: number): number {
  const matchesAt = (at: number) =>
    at >= floor && at + block.length <= lines.length && block.every((text, k) => lines[at + k] === text);
  for (let delta = 0; delta <= lines.length; delta++) {
    if (matchesAt(stated - delta)) return stated - delta;
    if (matchesAt(stated + delta)) return stated + delta;
  }
  return -1;
}

function mismatch(lines: string[], old: string[], stated: number, hunk: number, path: string) {
  for (let k = 0; k < old.length; k++) {
    const found = lines[stated + k];
    if (found !== old[k]) {
      const where = `line ${stated + k + 1}`;
      const seen = found === undefined ? "the end of the file" : JSON.stringify(found);
      return badRequest(
        `Hunk ${hunk} of ${path} does not apply: ${where} should be ${JSON.stringify(old[k])}, found ${seen}`,
      );
    }
  }
  return badRequest(`Hunk ${hunk} of ${path} does not apply`);
}
