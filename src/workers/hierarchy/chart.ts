import { badRequest, notFound } from "../../shared/errors.ts";
import type { HierarchyNode, TreeNode } from "./schema.ts";

/**
 * A realm's org chart as plain data, and every rule about it as pure functions (no state, no server),
 * so the rules can be tested exhaustively. The chart is kept a forest: every reportsTo names a node of
 * the chart and no chain of managers loops. The readers still cope with a chart that breaks this (one
 * edited in state by hand) instead of hiding nodes or looping.
 */

export interface Chart {
  nodes: Record<string, HierarchyNode>;
}

export interface NodeChanges {
  reportsTo?: string | null;
  title?: string;
  capabilities?: string[];
  rank?: number;
}

export const emptyChart = (): Chart => ({ nodes: {} });

/**
 * The longest chain of command, a root and its reports down to the deepest (counted in nodes). Far above
 * any real organisation; a chart nested thousands deep was a tree answer too deep to serialise (a 500).
 */
export const MAX_DEPTH = 100;

const nodeOf = (chart: Chart, agentId: string): HierarchyNode | undefined =>
  Object.hasOwn(chart.nodes, agentId) ? chart.nodes[agentId] : undefined;

/** Rank ascending (1 is the most senior), then agentId: the one order for reports, roots and matches. */
export function bySeniority(a: HierarchyNode, b: HierarchyNode): number {
  return a.rank - b.rank || (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0);
}

/**
 * The chart with `agentId` upserted: given fields replace, omitted ones keep their stored values (a
 * new node starts as an untitled root of rank 1). Refuses a self-report, a manager outside the
 * chart, and a manager that already reports (directly or not) to the agent.
 */
export function setNode(
  chart: Chart,
  realmId: string,
  agentId: string,
  changes: NodeChanges,
): { chart: Chart; node: HierarchyNode } {
  const existing = nodeOf(chart, agentId);
  const node: HierarchyNode = {
    realmId,
    agentId,
    reportsTo: changes.reportsTo !== undefined ? changes.reportsTo : (existing?.reportsTo ?? null),
    title: changes.title ?? existing?.title ?? "",
    capabilities: changes.capabilities ?? existing?.capabilities ?? [],
    rank: changes.rank ?? existing?.rank ?? 1,
  };
  if (node.reportsTo !== null) assertManagerAllowed(chart, realmId, agentId, node.reportsTo);
  return { chart: { nodes: { ...chart.nodes, [agentId]: node } }, node };
}

function assertManagerAllowed(chart: Chart, realmId: string, agentId: string, managerId: string): void {
  if (managerId === agentId) throw badRequest("agent cannot report to itself");
  if (!nodeOf(chart, managerId)) {
    throw badRequest(`manager ${managerId} is not in the hierarchy of realm ${realmId}`);
  }
  const loop = pathToAgent(chart, managerId, agentId);
  if (loop) throw badRequest(`cycle detected in hierarchy: ${[agentId, ...loop].join(" -> ")}`);
  const depth = chainOf(chart, managerId).length + heightOf(chart, agentId);
  if (depth > MAX_DEPTH) {
    throw badRequest(
      `a chain of command is at most ${MAX_DEPTH} deep: ${agentId} under ${managerId} would make it ${depth}`,
    );
  }
}

/** How many levels the agent's subtree spans, itself included (1 for a node without reports or none yet). */
function heightOf(chart: Chart, agentId: string): number {
  const children = childrenIndex(chart);
  let height = 0;
  let level = [agentId];
  const seen = new Set(level);
  while (level.length > 0) {
    height++;
    const next: string[] = [];
    for (const id of level) {
      for (const child of children.get(id) ?? []) {
        if (seen.has(child.agentId)) continue;
        seen.add(child.agentId);
        next.push(child.agentId);
      }
    }
    level = next;
  }
  return height;
}

/**
 * The chain of managers from `from` up to `target`, both included, or null when `target` is not
 * above `from`. A loop already in the chart (not through `target`) ends the walk rather than hangs it.
 */
function pathToAgent(chart: Chart, from: string, target: string): string[] | null {
  const path: string[] = [];
  const seen = new Set<string>();
  let current: string | null = from;
  while (current !== null && !seen.has(current)) {
    path.push(current);
    if (current === target) return path;
    seen.add(current);
    current = nodeOf(chart, current)?.reportsTo ?? null;
  }
  return null;
}

/** The chart without `agentId`; its reports move up to its manager (or become roots), so none is orphaned. */
export function removeNode(chart: Chart, realmId: string, agentId: string): Chart {
  const removed = nodeOf(chart, agentId);
  if (!removed) throw notFound(`Agent ${agentId} is not in the hierarchy of realm ${realmId}`);
  // Built from entries, not by assignment: an agent id is any string, and `nodes["__proto__"] = node`
  // would set the object's prototype instead of keeping the node (it vanished from the chart).
  const nodes: Record<string, HierarchyNode> = Object.fromEntries(
    Object.values(chart.nodes)
      .filter((node) => node.agentId !== agentId)
      .map((node) => [
        node.agentId,
        node.reportsTo === agentId ? { ...node, reportsTo: removed.reportsTo } : node,
      ]),
  );
  return { nodes };
}

/** The node and its managers up to its root; empty for an agent outside the chart. */
export function chainOf(chart: Chart, agentId: string): HierarchyNode[] {
  const chain: HierarchyNode[] = [];
  const seen = new Set<string>();
  let node = nodeOf(chart, agentId);
  while (node && !seen.has(node.agentId)) {
    seen.add(node.agentId);
    chain.push(node);
    node = node.reportsTo === null ? undefined : nodeOf(chart, node.reportsTo);
  }
  return chain;
}

/** Nodes holding `capability`, compared whole and case-insensitively ("Sales" finds "sales", not "pre-sales"). */
export function findByCapability(chart: Chart, capability: string): HierarchyNode[] {
  const wanted = capability.trim().toLowerCase();
  return Object.values(chart.nodes)
    .filter((node) => node.capabilities.some((held) => held.trim().toLowerCase() === wanted))
    .sort(bySeniority);
}

/**
 * The chart as nested trees. Roots are the nodes without a manager, plus any whose manager is missing
 * (so a dangling reportsTo cannot hide a subtree); nodes caught in a loop are then rooted at the most
 * senior of them. Each node appears exactly once.
 */
export function buildForest(chart: Chart): TreeNode[] {
  const children = childrenIndex(chart);
  const placed = new Set<string>();
  const all = Object.values(chart.nodes).sort(bySeniority);
  const roots = all
    .filter((node) => node.reportsTo === null || !nodeOf(chart, node.reportsTo))
    .map((node) => grow(node, children, placed));
  for (const node of all) if (!placed.has(node.agentId)) roots.push(grow(node, children, placed));
  return roots;
}

/** The subtree under `agentId`. */
export function buildSubtree(chart: Chart, realmId: string, agentId: string): TreeNode {
  const root = nodeOf(chart, agentId);
  if (!root) throw notFound(`Agent ${agentId} is not in the hierarchy of realm ${realmId}`);
  return grow(root, childrenIndex(chart), new Set());
}

function childrenIndex(chart: Chart): Map<string, HierarchyNode[]> {
  const children = new Map<string, HierarchyNode[]>();
  for (const node of Object.values(chart.nodes)) {
    if (node.reportsTo === null) continue;
    const siblings = children.get(node.reportsTo) ?? [];
    siblings.push(node);
    children.set(node.reportsTo, siblings);
  }
  for (const siblings of children.values()) siblings.sort(bySeniority);
  return children;
}

function grow(node: HierarchyNode, children: Map<string, HierarchyNode[]>, placed: Set<string>): TreeNode {
  placed.add(node.agentId);
  const reports: TreeNode[] = [];
  // Checked child by child: in a looping chart a deeper call may already have placed a later sibling.
  for (const child of children.get(node.agentId) ?? []) {
    if (!placed.has(child.agentId)) reports.push(grow(child, children, placed));
  }
  return {
    agentId: node.agentId,
    title: node.title,
    capabilities: node.capabilities,
    rank: node.rank,
    reports,
  };
}
