import type { z } from "zod";
import { systemCall } from "../../engine/system-call.ts";
import type { TriggerFn } from "../../engine/types.ts";
import { AppError } from "../../shared/errors.ts";
import { MAX_PAGE_LIMIT } from "../../shared/pagination.ts";
import { optional } from "./calls.ts";
import { readSecrets } from "./cascade.ts";
import { EXPORT_VERSION, type exportAnswer, type HierarchyRow, type Realm } from "./schema.ts";
import { publicRealm } from "./store.ts";

interface TreeNode {
  agentId: string;
  title?: string | null;
  capabilities?: string[];
  rank?: number;
  reports?: TreeNode[];
}

export type ExportDoc = z.infer<typeof exportAnswer>;

/**
 * The export is one JSON document, held whole in memory while it is built and sent. A realm's data has
 * no size limit (a realm key may add directives of 10 kB without end), so without a bound one export
 * request could take the process's memory and stop the service for every realm. Far above what an
 * import takes in one request (the body limit, 1 MiB by default).
 */
export const MAX_EXPORT_BYTES = 32 * 1024 * 1024;

/** The JSON size of the document so far, counted as its parts are read: 413 once past the bound. */
function exportBudget(realmId: string): (part: unknown) => void {
  let used = 0;
  return (part) => {
    used += Buffer.byteLength(JSON.stringify(part) ?? "");
    if (used > MAX_EXPORT_BYTES) {
      throw new AppError(
        "payload_too_large",
        `Realm ${realmId} is too large to export in one document (over ${MAX_EXPORT_BYTES / (1024 * 1024)} MiB)`,
      );
    }
  };
}

/** Every item of a paginated list, each page counted against the budget as it comes. */
async function boundedPages<Answer extends { nextCursor: string | null }, Item>(
  read: (page: { limit: number; cursor?: string }) => Promise<Answer>,
  items: (answer: Answer) => Item[],
  count: (part: unknown) => void,
): Promise<Item[]> {
  const all: Item[] = [];
  let cursor: string | undefined;
  do {
    const answer = await read({ limit: MAX_PAGE_LIMIT, ...(cursor ? { cursor } : {}) });
    const page = items(answer);
    count(page);
    for (const item of page) all.push(item);
    cursor = answer.nextCursor ?? undefined;
  } while (cursor);
  return all;
}

/**
 * The realm with its agents, directives and org chart, read from the workers that own them. A worker
 * that is not running contributes an empty list; any other failure fails the export rather than
 * producing a document that silently lacks data. Secrets are included only when not scrubbed.
 */
export async function exportRealm(
  trigger: TriggerFn,
  realm: Realm,
  scrubSecrets: boolean,
): Promise<ExportDoc> {
  const realmId = realm.id;
  const count = exportBudget(realmId);
  const [agents, directives, tree] = await Promise.all([
    optional(
      boundedPages(
        (page) => systemCall(trigger, "agent::list", { realmId, ...page }),
        (answer) => answer.agents,
        count,
      ).then((agents) => ({ agents })),
      { agents: [] },
    ),
    optional(
      boundedPages(
        (page) => systemCall(trigger, "directive::list", { realmId, ...page }),
        (answer) => answer.directives,
        count,
      ).then((directives) => ({ directives })),
      { directives: [] },
    ),
    optional(systemCall(trigger, "hierarchy::tree", { realmId }), { roots: [] }),
  ]);
  count(tree.roots);
  const doc: ExportDoc = {
    version: EXPORT_VERSION,
    realm: publicRealm(realm),
    agents: agents.agents,
    directives: directives.directives,
    hierarchy: flattenTree(tree.roots),
  };
  if (!scrubSecrets) {
    doc.secrets = await readSecrets(trigger, realmId);
    count(doc.secrets);
  }
  return doc;
}

/** The nested tree as flat rows, each manager before its reports (so import can set them in order). */
export function flattenTree(roots: TreeNode[]): HierarchyRow[] {
  const rows: HierarchyRow[] = [];
  const queue: Array<{ node: TreeNode; reportsTo: string | null }> = roots.map((node) => ({
    node,
    reportsTo: null,
  }));
  // Breadth-first with an index instead of shift(): linear in the size of the chart.
  for (let i = 0; i < queue.length; i++) {
    const { node, reportsTo } = queue[i] as (typeof queue)[number];
    rows.push({
      agentId: node.agentId,
      reportsTo,
      title: node.title ?? null,
      capabilities: node.capabilities ?? [],
      rank: node.rank ?? 0,
    });
    for (const report of node.reports ?? []) queue.push({ node: report, reportsTo: node.agentId });
  }
  return rows;
}
