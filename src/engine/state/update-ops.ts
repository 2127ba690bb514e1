import { z } from "zod";
import { isJsonObject, type JsonObject } from "../../shared/json-object.ts";

const FORBIDDEN_SEGMENTS = new Set(["__proto__", "constructor", "prototype"]);
const MAX_PATH_DEPTH = 32;
const MAX_SEGMENT_BYTES = 256;

const pathSchema = z.union([z.string(), z.array(z.string()).max(MAX_PATH_DEPTH)]);

export const updateOpSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("set"), path: pathSchema, value: z.unknown() }),
  z.strictObject({
    type: z.literal("merge"),
    path: pathSchema.optional(),
    value: z.record(z.string(), z.unknown()),
  }),
  z.strictObject({ type: z.literal("increment"), path: pathSchema, by: z.number().finite().default(1) }),
  z.strictObject({ type: z.literal("decrement"), path: pathSchema, by: z.number().finite().default(1) }),
  z.strictObject({ type: z.literal("append"), path: pathSchema.optional(), value: z.unknown() }),
  z.strictObject({ type: z.literal("remove"), path: pathSchema }),
]);

export type UpdateOp = z.infer<typeof updateOpSchema>;
export type UpdateOpError = { op_index: number; code: string; message: string };

/** A string path is one top-level key ("" = the root); an array walks nested keys. */
function segmentsOf(path: string | string[] | undefined): string[] {
  if (path === undefined || path === "") return [];
  return typeof path === "string" ? [path] : path;
}

function checkSegments(segments: string[]): string | null {
  if (segments.length > MAX_PATH_DEPTH) return `path deeper than ${MAX_PATH_DEPTH}`;
  for (const segment of segments) {
    if (FORBIDDEN_SEGMENTS.has(segment)) return `path segment "${segment}" is not allowed`;
    if (Buffer.byteLength(segment) > MAX_SEGMENT_BYTES)
      return `path segment longer than ${MAX_SEGMENT_BYTES} bytes`;
  }
  return null;
}

/**
 * A copy of the root and of each object on the way to the last segment's parent (everything else is
 * shared, never changed), creating missing objects when `create` is set; null if a non-object blocks
 * the way, undefined if a segment is missing and `create` is not set. Copying only the path keeps an
 * op's cost independent of the value's size, and a failing op leaves the value as it was.
 */
function copyPath(
  root: JsonObject,
  segments: string[],
  create: boolean,
): { root: JsonObject; parent: JsonObject } | null | undefined {
  const copy: JsonObject = { ...root };
  let node = copy;
  for (const segment of segments.slice(0, -1)) {
    let next = Object.hasOwn(node, segment) ? node[segment] : undefined;
    if (next === undefined || next === null) {
      if (!create) return undefined;
      next = {};
    }
    if (!isJsonObject(next)) return null;
    const child: JsonObject = { ...next };
    node[segment] = child;
    node = child;
  }
  return { root: copy, parent: node };
}

class OpFailure extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

function applyOne(root: unknown, op: UpdateOp): unknown {
  const segments = segmentsOf(op.path);
  const problem = checkSegments(segments);
  if (problem) throw new OpFailure(`${op.type}.path.invalid`, problem);
  if (segments.length === 0) return applyAtRoot(root, op);
  if (!isJsonObject(root))
    throw new OpFailure(`${op.type}.target_not_object`, "the stored value is not an object");
  // remove never creates: removing under a missing parent is a no-op, not a new empty object.
  const copied = copyPath(root, segments, op.type !== "remove");
  if (copied === undefined) return root;
  if (!copied) throw new OpFailure(`${op.type}.target_not_object`, "a value on the path is not an object");
  const { parent } = copied;
  const leaf = segments[segments.length - 1];
  const current = Object.hasOwn(parent, leaf) ? parent[leaf] : undefined;
  switch (op.type) {
    case "set":
      parent[leaf] = op.value;
      break;
    case "merge":
      if (current !== undefined && !isJsonObject(current)) {
        throw new OpFailure("merge.target_not_object", `"${leaf}" is not an object`);
      }
      parent[leaf] = { ...(current as JsonObject | undefined), ...op.value };
      break;
    case "increment":
    case "decrement": {
      if (current !== undefined && typeof current !== "number") {
        throw new OpFailure(`${op.type}.not_number`, `"${leaf}" is not a number`);
      }
      const delta = op.type === "increment" ? op.by : -op.by;
      const next = (current ?? 0) + delta;
      // Infinity would be stored as JSON null, silently losing the counter.
      if (!Number.isFinite(next))
        throw new OpFailure(`${op.type}.overflow`, `"${leaf}" would leave the number range`);
      parent[leaf] = next;
      break;
    }
    case "append":
      parent[leaf] = appended(current, op.value);
      break;
    case "remove":
      delete parent[leaf];
      break;
  }
  return copied.root;
}

function applyAtRoot(root: unknown, op: UpdateOp): unknown {
  switch (op.type) {
    case "set":
      return op.value;
    case "merge":
      if (!isJsonObject(root))
        throw new OpFailure("merge.target_not_object", "the stored value is not an object");
      return { ...root, ...op.value };
    case "append":
      return appended(root, op.value);
    default:
      throw new OpFailure(`${op.type}.path.invalid`, `${op.type} needs a non-empty path`);
  }
}

function appended(current: unknown, value: unknown): unknown {
  if (current === undefined || current === null) return typeof value === "string" ? value : [value];
  if (Array.isArray(current)) return [...current, value];
  if (typeof current === "string" && typeof value === "string") return current + value;
  throw new OpFailure("append.type_mismatch", "append needs an array, or a string and a string value");
}

/**
 * Applies ops in order to a copy of `start` (the stored value, `{}` when missing). An op that cannot
 * apply is skipped and reported; the others still apply, as iii's state::update does.
 */
export function applyUpdateOps(start: unknown, ops: UpdateOp[]): { value: unknown; errors: UpdateOpError[] } {
  let value: unknown = start === undefined ? {} : start;
  const errors: UpdateOpError[] = [];
  ops.forEach((op, index) => {
    try {
      // Each op copies what it changes, so a failing op leaves no half-made change behind.
      value = applyOne(value, op);
    } catch (error) {
      if (!(error instanceof OpFailure)) throw error;
      errors.push({ op_index: index, code: error.code, message: error.message });
    }
  });
  return { value, errors };
}
