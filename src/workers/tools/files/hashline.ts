import { createHash } from "node:crypto";
import { badRequest } from "../../../shared/errors.ts";

/** A line's anchor: 6 hex digits of its SHA-256, so an edit names the line it saw, not just a number. */
export const lineHash = (text: string): string => createHash("sha256").update(text).digest("hex").slice(0, 6);

/** `N:hash|text` per line, numbered from 1. */
export function hashlines(content: string, from = 1, count = Number.POSITIVE_INFINITY): string[] {
  const lines = content === "" ? [] : content.replace(/\n$/, "").split("\n");
  return lines.slice(from - 1, from - 1 + count).map((text, k) => `${from + k}:${lineHash(text)}|${text}`);
}

export interface HashlineEdit {
  line: number;
  hash: string;
  /** replace: the line becomes `content` (several lines if it has newlines); delete: the line goes;
   *  insert_after: `content` goes after the line. */
  op: "replace" | "delete" | "insert_after";
  content?: string;
}

/**
 * The edits applied to `content` at once, each checked against the line it names: a line number whose
 * hash no longer matches (the file changed since it was read) refuses the whole edit.
 */
export function applyHashlineEdits(content: string, edits: HashlineEdit[], path: string): string {
  const trailingNewline = content === "" || content.endsWith("\n");
  const lines = content === "" ? [] : content.replace(/\n$/, "").split("\n");
  const seen = new Set<number>();
  for (const edit of edits) {
    const text = lines[edit.line - 1];
    if (text === undefined)
      throw badRequest(`${path} has ${lines.length} lines; there is no line ${edit.line}`);
    if (lineHash(text) !== edit.hash.toLowerCase()) {
      throw badRequest(
        `${path} line ${edit.line} changed since it was read (hash ${lineHash(text)}, not ${edit.hash}): read it again`,
      );
    }
    if (edit.op !== "insert_after" && seen.has(edit.line))
      throw badRequest(`line ${edit.line} is edited twice`);
    if (edit.op !== "insert_after") seen.add(edit.line);
    if (edit.op !== "delete" && edit.content === undefined)
      throw badRequest(`${edit.op} of line ${edit.line} needs content`);
  }
  // From the bottom up, so earlier line numbers stay valid.
  const ordered = [...edits].sort((x, y) => y.line - x.line || (x.op === "insert_after" ? -1 : 1));
  for (const edit of ordered) {
    const replacement = edit.content === undefined ? [] : edit.content.replace(/\n$/, "").split("\n");
    if (edit.op === "replace") lines.splice(edit.line - 1, 1, ...replacement);
    else if (edit.op === "delete") lines.splice(edit.line - 1, 1);
    else lines.splice(edit.line, 0, ...replacement);
  }
  const text = lines.join("\n");
  return lines.length > 0 && trailingNewline ? `${text}\n` : text;
}
