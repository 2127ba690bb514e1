import { ACTS_FOR_AGENT } from "../../engine/acting-agent.ts";
import { casUpdate } from "../../engine/state/cas.ts";
import { stateClient } from "../../engine/state/client.ts";
import type { InvocationContext } from "../../engine/types.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { assertRealmAccess, requireAdmin } from "../../shared/access.ts";
import { assertAgentRef, recheckAgentRef, recheckRealm, requireRealm } from "../../shared/realm-refs.ts";
import {
  buildForest,
  buildSubtree,
  type Chart,
  chainOf,
  emptyChart,
  findByCapability,
  removeNode,
  setNode,
} from "./chart.ts";
import {
  agentInput,
  chainAnswer,
  findAnswer,
  findInput,
  type HierarchyNode,
  hierarchyNode,
  nodeDeleted,
  realmInput,
  setInput,
  treeAnswer,
  treeInput,
} from "./schema.ts";

/**
 * A realm's whole org chart is ONE record (scope `hierarchy`, key realmId). Org charts are small
 * (tens, at most a few thousand agents), and keeping them whole makes the cycle check and the write
 * one compare-and-swap step: two concurrent sets can never each pass the check and jointly close a loop.
 */
const SCOPE = "hierarchy";

/** Hierarchy: the org chart of a realm's agents (DESIGN §5, §6). */
export function registerHierarchy(worker: WorkerClient): { ready?: Promise<void> } {
  const trigger = worker.trigger.bind(worker);
  const state = stateClient(trigger);

  const loadChart = async (realmId: string): Promise<Chart> =>
    (await state.get<Chart>(SCOPE, realmId)) ?? emptyChart();
  const changeChart = (realmId: string, change: (chart: Chart) => Chart) =>
    casUpdate<Chart>(state, SCOPE, realmId, ({ value }) => change(value ?? emptyChart()));
  /** The realm's whole chart (a realm delete); true when there was one. */
  const purgeChart = async (realmId: string) => (await state.delete(SCOPE, realmId)) !== null;
  /** An agent's node (an agent delete), its reports moving up to its manager; true when there was one. */
  const purgeNode = async (realmId: string, agentId: string) => {
    const { changed } = await casUpdate<Chart>(state, SCOPE, realmId, ({ value }) =>
      value && Object.hasOwn(value.nodes, agentId) ? removeNode(value, realmId, agentId) : undefined,
    );
    return changed;
  };
  /** Every function: the caller's key must reach the realm, and the realm must exist. */
  const enter = async (ctx: InvocationContext, realmId: string, write = false) => {
    assertRealmAccess(ctx, realmId);
    await requireRealm(trigger, realmId, { write });
  };

  worker.registerFunction(
    {
      id: "hierarchy::set",
      description: "Place an agent in the org chart; omitted fields keep their values. Returns the node",
      input: setInput,
      output: hierarchyNode,
    },
    async ({ realmId, agentId, ...changes }, ctx) => {
      await enter(ctx, realmId, true);
      const known = await assertAgentRef(trigger, agentId, realmId);
      let stored: HierarchyNode | undefined;
      await changeChart(realmId, (chart) => {
        const { chart: next, node } = setNode(chart, realmId, agentId, changes);
        stored = node;
        return next;
      });
      // A realm or agent delete that began meanwhile: take the node (or the chart) back out.
      await recheckRealm(trigger, realmId, () => purgeChart(realmId));
      await recheckAgentRef(trigger, agentId, realmId, known, () => purgeNode(realmId, agentId));
      // The update runs at least once, and each run sets it.
      return stored as HierarchyNode;
    },
  );

  worker.registerFunction(
    {
      id: "hierarchy::tree",
      description: "The org chart as nested {roots: [{agentId, title, capabilities, rank, reports}]}",
      input: treeInput,
      output: treeAnswer,
    },
    async ({ realmId, rootAgentId }, ctx) => {
      await enter(ctx, realmId);
      const chart = await loadChart(realmId);
      return { roots: rootAgentId ? [buildSubtree(chart, realmId, rootAgentId)] : buildForest(chart) };
    },
  );

  worker.registerFunction(
    {
      id: "hierarchy::find",
      description: "Nodes holding a capability (whole word, any case): {matches, count}",
      input: findInput,
      output: findAnswer,
    },
    async ({ realmId, capability }, ctx) => {
      await enter(ctx, realmId);
      const matches = findByCapability(await loadChart(realmId), capability);
      return { matches, count: matches.length };
    },
  );

  worker.registerFunction(
    {
      id: "hierarchy::chain",
      description: "An agent's chain of command, itself first, root last: {chain} (empty outside the chart)",
      input: agentInput,
      metadata: ACTS_FOR_AGENT,
      output: chainAnswer,
    },
    async ({ realmId, agentId }, ctx) => {
      await enter(ctx, realmId);
      return { chain: chainOf(await loadChart(realmId), agentId) };
    },
  );

  worker.registerFunction(
    {
      id: "hierarchy::delete",
      description: "Remove an agent from the org chart; its reports move up to its manager",
      input: agentInput,
      output: nodeDeleted,
    },
    async ({ realmId, agentId }, ctx) => {
      await enter(ctx, realmId, true);
      await changeChart(realmId, (chart) => removeNode(chart, realmId, agentId));
      return { deleted: true };
    },
  );

  worker.registerFunction(
    {
      id: "hierarchy::purge_realm",
      description: "Delete a realm's org chart (part of a realm delete); idempotent",
      input: realmInput,
    },
    async ({ realmId }, ctx) => {
      // An internal cascade step: admin or system only. No requireRealm: the realm is being deleted.
      requireAdmin(ctx);
      return { purged: await purgeChart(realmId) };
    },
  );

  worker.registerFunction(
    {
      id: "hierarchy::purge_agent",
      description:
        "Take a deleted agent out of the org chart, its reports moving up (part of an agent delete)",
      input: agentInput,
    },
    async ({ realmId, agentId }, ctx) => {
      requireAdmin(ctx);
      return { purged: await purgeNode(realmId, agentId) };
    },
  );

  worker.registerRoute("hierarchy::set", "POST", "/api/hierarchy");
  worker.registerRoute("hierarchy::tree", "GET", "/api/hierarchy/:realmId/tree");
  worker.registerRoute("hierarchy::find", "GET", "/api/hierarchy/:realmId/find");
  worker.registerRoute("hierarchy::chain", "GET", "/api/hierarchy/:realmId/chain/:agentId");
  worker.registerRoute("hierarchy::delete", "DELETE", "/api/hierarchy/:realmId/:agentId");
  return {};
}
