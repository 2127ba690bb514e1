import type { z } from "zod";
import { systemCall } from "../../engine/system-call.ts";
import type { TriggerFn } from "../../engine/types.ts";
import { allPages } from "../../shared/pagination.ts";
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
  const [agents, directives, tree] = await Promise.all([
    optional(
      allPages(
        (page) => systemCall(trigger, "agent::list", { realmId, ...page }),
        (answer) => answer.agents,
      ).then((agents) => ({ agents })),
      { agents: [] },
    ),
    optional(
      allPages(
        (page) => systemCall(trigger, "directive::list", { realmId, ...page }),
        (answer) => answer.directives,
      ).then((directives) => ({ directives })),
      { directives: [] },
    ),
    optional(systemCall(trigger, "hierarchy::tree", { realmId }), { roots: [] }),
  ]);
  const doc: ExportDoc = {
    version: EXPORT_VERSION,
    realm: publicRealm(realm),
    agents: agents.agents,
    directives: directives.directives,
    hierarchy: flattenTree(tree.roots),
  };
  if (!scrubSecrets) doc.secrets = await readSecrets(trigger, realmId);
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
