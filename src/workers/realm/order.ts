import { badRequest } from "../../shared/errors.ts";
import type { ExportDocument } from "./schema.ts";

/**
 * Items ordered so each comes after its parent (a parent-first walk from the roots). `parentOf` gives
 * the parent's id, or undefined for a root. Items left over are on a cycle: `onCycle` names the error.
 */
function parentFirst<T>(
  items: T[],
  idOf: (item: T) => string,
  parentOf: (item: T) => string | undefined,
): T[] {
  // Siblings are appended in place: a copy of the list per item was quadratic, and a document of tens of
  // thousands of rows, well within the body limit, held the event loop for many seconds.
  const children = new Map<string | undefined, T[]>();
  for (const item of items) {
    const parent = parentOf(item);
    const siblings = children.get(parent);
    if (siblings) siblings.push(item);
    else children.set(parent, [item]);
  }
  const ordered: T[] = [...(children.get(undefined) ?? [])];
  for (let i = 0; i < ordered.length; i++) {
    for (const child of children.get(idOf(ordered[i] as T)) ?? []) ordered.push(child);
  }
  if (ordered.length < items.length) {
    const placed = new Set(ordered.map(idOf));
    const stuck = items.filter((item) => !placed.has(idOf(item))).map(idOf);
    throw badRequest(`data: circular references between ${stuck.slice(0, 5).join(", ")}`);
  }
  return ordered;
}

/** 400 when an id appears twice: references to it (directive owners, org-chart rows) would be ambiguous. */
export function assertUnique(ids: string[], what: string): void {
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) throw badRequest(`data: ${what} ${id} appears twice`);
    seen.add(id);
  }
}

/** Directives parent-first; a parent missing from the document is an error (directives are never deleted). */
export function orderDirectives(directives: ExportDocument["directives"]): ExportDocument["directives"] {
  assertUnique(
    directives.map((d) => d.id),
    "directive",
  );
  const ids = new Set(directives.map((d) => d.id));
  for (const directive of directives) {
    if (directive.parentId && !ids.has(directive.parentId)) {
      throw badRequest(
        `data: directive ${directive.id} names parent ${directive.parentId}, which is not in the document`,
      );
    }
  }
  return parentFirst(
    directives,
    (d) => d.id,
    (d) => d.parentId ?? undefined,
  );
}

/** Org-chart rows managers-first; a manager without a row of its own makes its reports roots. */
export function orderHierarchy(nodes: ExportDocument["hierarchy"]): ExportDocument["hierarchy"] {
  assertUnique(
    nodes.map((n) => n.agentId),
    "hierarchy node",
  );
  const ids = new Set(nodes.map((n) => n.agentId));
  return parentFirst(
    nodes,
    (n) => n.agentId,
    (n) => (n.reportsTo && ids.has(n.reportsTo) ? n.reportsTo : undefined),
  );
}
