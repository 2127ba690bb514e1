import { join } from "node:path";
import { z } from "zod";
import { badRequest } from "../../../shared/errors.ts";
import { agentIdField, pathField } from "../fields.ts";
import { existingInside, resolveInside, shown } from "../sandbox.ts";
import { defineTool } from "../tool.ts";
import {
  listInside,
  readInside,
  readRangeInside,
  removeInside,
  statInside,
  writeInside,
} from "../workspace-fs.ts";
import { unifiedDiff } from "./diff.ts";
import { applyHashlineEdits, hashlines } from "./hashline.ts";
import { applyHunks, parseUnifiedDiff } from "./patch.ts";

const MAX_READ_BYTES = 1_000_000;
const MAX_WRITE_BYTES = 10_000_000;

/** UTF-8 text, or base64 when the bytes are not valid UTF-8. */
function decoded(bytes: Buffer): { content: string; encoding: "utf8" | "base64" } {
  try {
    return { content: new TextDecoder("utf-8", { fatal: true }).decode(bytes), encoding: "utf8" };
  } catch {
    return { content: bytes.toString("base64"), encoding: "base64" };
  }
}

async function readText(root: string, path: string): Promise<{ full: string; text: string }> {
  const full = await existingInside(root, path);
  const bytes = await readInside(root, full, MAX_WRITE_BYTES);
  const { content, encoding } = decoded(bytes);
  if (encoding !== "utf8") throw badRequest(`${path} is not UTF-8 text`);
  return { full, text: content };
}

const fileRead = defineTool({
  id: "tool::file_read",
  actsFor: "agent",
  description:
    "Read a file of your workspace: {path, content, size, encoding, truncated}. Text comes as UTF-8, other bytes as base64. Use offset and maxBytes for large files.",
  input: z.strictObject({
    agentId: agentIdField,
    path: pathField(),
    offset: z.number().int().min(0).default(0).describe("Byte offset to start reading at"),
    maxBytes: z.number().int().min(1).max(MAX_READ_BYTES).default(200_000).describe("Most bytes to return"),
  }),
  async run({ agentId, path, offset, maxBytes }, ctx) {
    const root = await ctx.workspace(agentId);
    const full = await existingInside(root, path);
    if (!(await statInside(root, full)).isFile())
      throw badRequest(`${path} is not a file (use tool::file_list for directories)`);
    const { bytes, size } = await readRangeInside(root, full, offset, maxBytes);
    return {
      path: shown(root, full),
      size,
      ...decoded(bytes),
      truncated: offset + maxBytes < size,
    };
  },
});

const fileWrite = defineTool({
  id: "tool::file_write",
  actsFor: "agent",
  description:
    "Write a file in your workspace (parent directories are created): {path, bytes}. content is UTF-8 text, or base64 with encoding: base64; append adds to the end.",
  input: z.strictObject({
    agentId: agentIdField,
    path: pathField(),
    content: z
      .string()
      .max(MAX_WRITE_BYTES * 2)
      .describe("What to write"),
    encoding: z.enum(["utf8", "base64"]).default("utf8"),
    append: z.boolean().default(false).describe("Add to the end instead of replacing the file"),
  }),
  risky: true,
  async run({ agentId, path, content, encoding, append }, ctx) {
    const root = await ctx.workspace(agentId);
    const full = await resolveInside(root, path);
    if (full === root) throw badRequest("path must name a file, not the workspace itself");
    const bytes = Buffer.from(content, encoding);
    if (bytes.length > MAX_WRITE_BYTES) throw badRequest(`content is larger than ${MAX_WRITE_BYTES} bytes`);
    await ctx.sandbox.checkRoom(root, bytes.length);
    await writeInside(root, full, bytes, { append });
    return { path: shown(root, full), bytes: bytes.length };
  },
});

const fileList = defineTool({
  id: "tool::file_list",
  actsFor: "agent",
  description:
    "List a directory of your workspace: {path, entries: [{path, type, size, modified}], truncated}. recursive walks subdirectories (links are listed, not followed).",
  input: z.strictObject({
    agentId: agentIdField,
    path: pathField("Directory").default("."),
    recursive: z.boolean().default(false),
    maxEntries: z.number().int().min(1).max(10_000).default(1000),
  }),
  async run({ agentId, path, recursive, maxEntries }, ctx) {
    const root = await ctx.workspace(agentId);
    const start = await existingInside(root, path);
    if (!(await statInside(root, start)).isDirectory()) throw badRequest(`${path} is not a directory`);
    const entries: Array<{ path: string; type: string; size: number; modified: string }> = [];
    const queue = [start];
    let truncated = false;
    while (queue.length > 0 && !truncated) {
      const dir = queue.shift() as string;
      // A subdirectory swapped for a link since it was seen is skipped, not followed.
      // One more than fits tells that the listing is truncated.
      const room = maxEntries - entries.length + 1;
      const listed =
        dir === start ? await listInside(root, dir, room) : await listInside(root, dir, room).catch(() => []);
      for (const { name, stats } of listed.sort((a, b) => a.name.localeCompare(b.name))) {
        if (entries.length >= maxEntries) {
          truncated = true;
          break;
        }
        const full = join(dir, name);
        const type = stats.isSymbolicLink()
          ? "symlink"
          : stats.isDirectory()
            ? "directory"
            : stats.isFile()
              ? "file"
              : "other";
        entries.push({
          path: shown(root, full),
          type,
          size: stats.size,
          modified: stats.mtime.toISOString(),
        });
        if (recursive && type === "directory" && name !== ".git") queue.push(full);
      }
    }
    return { path: shown(root, start), entries, truncated };
  },
});

const applyPatch = defineTool({
  id: "tool::apply_patch",
  actsFor: "agent",
  description:
    "Apply a unified diff (as git diff or diff -u write it) to files of your workspace. Every context and removed line is verified; if any hunk does not match, nothing is written and the error names the line. Creates (--- /dev/null) and deletes (+++ /dev/null) files.",
  input: z.strictObject({
    agentId: agentIdField,
    patch: z.string().min(1, "patch is empty").max(MAX_WRITE_BYTES).describe("The unified diff"),
  }),
  risky: true,
  async run({ agentId, patch }, ctx) {
    const root = await ctx.workspace(agentId);
    const planned: Array<{ full: string; content: string | null; path: string }> = [];
    for (const file of parseUnifiedDiff(patch)) {
      const name = (file.newPath ?? file.oldPath) as string;
      const full = await resolveInside(root, name);
      const before = file.oldPath === null ? "" : (await readText(root, file.oldPath)).text;
      const after = applyHunks(before, file.hunks, name);
      planned.push({ full, content: file.newPath === null ? null : after, path: shown(root, full) });
    }
    // All hunks of all files applied in memory first: a patch applies whole or not at all.
    for (const { full, content } of planned) {
      if (content === null) await removeInside(root, full);
      else await writeInside(root, full, content);
    }
    return { files: planned.map(({ path, content }) => ({ path, deleted: content === null })) };
  },
});

const hashlineEdits = z
  .array(
    z.strictObject({
      line: z.number().int().min(1).describe("Line number as hashline_read showed it"),
      hash: z
        .string()
        .regex(/^[0-9a-fA-F]{6}$/, "hash must be the 6 hex digits hashline_read showed")
        .describe("That line's hash"),
      op: z.enum(["replace", "delete", "insert_after"]),
      content: z.string().max(MAX_WRITE_BYTES).optional().describe("New text (replace, insert_after)"),
    }),
  )
  .min(1, "edits must not be empty")
  .max(1000);

const hashlineRead = defineTool({
  id: "tool::hashline_read",
  actsFor: "agent",
  description:
    "Read a text file as numbered, hash-anchored lines `N:hash|text` for tool::hashline_edit: {path, lines, totalLines}.",
  input: z.strictObject({
    agentId: agentIdField,
    path: pathField(),
    fromLine: z.number().int().min(1).default(1),
    maxLines: z.number().int().min(1).max(5000).default(2000),
  }),
  async run({ agentId, path, fromLine, maxLines }, ctx) {
    const root = await ctx.workspace(agentId);
    const { full, text } = await readText(root, path);
    const lines = hashlines(text, fromLine, maxLines);
    return { path: shown(root, full), lines, totalLines: hashlines(text).length };
  },
});

const hashlineEdit = defineTool({
  id: "tool::hashline_edit",
  actsFor: "agent",
  description:
    "Edit a text file by hash-anchored lines from tool::hashline_read: each edit names {line, hash, op: replace|delete|insert_after, content}. If any named line changed since it was read, nothing is written. Returns {path, diff}.",
  input: z.strictObject({ agentId: agentIdField, path: pathField(), edits: hashlineEdits }),
  risky: true,
  async run({ agentId, path, edits }, ctx) {
    const root = await ctx.workspace(agentId);
    const { full, text } = await readText(root, path);
    const after = applyHashlineEdits(text, edits, path);
    await writeInside(root, full, after);
    return { path: shown(root, full), diff: unifiedDiff(text, after, shown(root, full)) };
  },
});

const hashlineDiff = defineTool({
  id: "tool::hashline_diff",
  actsFor: "agent",
  description: "What tool::hashline_edit would change, as a unified diff, without writing: {path, diff}.",
  input: z.strictObject({ agentId: agentIdField, path: pathField(), edits: hashlineEdits }),
  async run({ agentId, path, edits }, ctx) {
    const root = await ctx.workspace(agentId);
    const { full, text } = await readText(root, path);
    return {
      path: shown(root, full),
      diff: unifiedDiff(text, applyHashlineEdits(text, edits, path), shown(root, full)),
    };
  },
});

export const fileTools = [
  fileRead,
  fileWrite,
  fileList,
  applyPatch,
  hashlineRead,
  hashlineEdit,
  hashlineDiff,
];
