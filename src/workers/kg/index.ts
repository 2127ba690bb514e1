import { z } from "zod";
import { ACTS_FOR_AGENT } from "../../engine/acting-agent.ts";
import { call } from "../../engine/call.ts";
import { stateClient } from "../../engine/state/client.ts";
import type { InvocationContext } from "../../engine/types.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { requireAdmin } from "../../shared/access.ts";
import { notFound } from "../../shared/errors.ts";
import { recheckRealm, requireRealm } from "../../shared/realm-refs.ts";
import { registerRetention } from "../../shared/retention.ts";
import { addVersion } from "./add.ts";
import { GraphStats } from "./aggregates.ts";
import { diff, timeline } from "./history.ts";
import { queryTemporal, traverse } from "./query.ts";
import { sweepHistory } from "./retention.ts";
import {
  addInput,
  diffAnswer,
  diffInput,
  entityName,
  entityVersion,
  purgeAgentInput,
  purgeRealmInput,
  queryInput,
  statsAnswer,
  statsInput,
  timelineAnswer,
  timelineInput,
  traversalAnswer,
  traverseInput,
} from "./schema.ts";
import { purgeGraph, realmGraphsScope } from "./store.ts";
import { mermaidOf } from "./visualize.ts";

export interface KgOptions {
  /** False in a process that does not serve the data (a CLI command): no retention sweep. */
  background?: boolean;
  /** Days a superseded version is kept (AGENTOS_KG_HISTORY_RETENTION_DAYS); 0 or unset: forever. */
  retentionDays?: number;
  warn?: (message: string) => void;
}

/** The temporal knowledge graph: one per agent, versioned, indexed for point-in-time questions. */
export function registerKg(worker: WorkerClient, options: KgOptions = {}): { ready?: Promise<void> } {
  const trigger = worker.trigger.bind(worker);
  const state = stateClient(trigger);
  const graphs = new GraphStats(state);
  registerRetention(worker, {
    id: "kg::sweep_retention",
    what: "knowledge-graph versions superseded",
    days: options.retentionDays ?? 0,
    background: options.background !== false,
    sweep: (cutoff) => sweepHistory(trigger, state, cutoff),
    warn: options.warn,
  });

  /** The agent's realm, read as the caller: another realm's agent is refused by the agents worker. */
  const agentRealm = async (agentId: string, ctx: InvocationContext): Promise<string> => {
    const agent = await call(trigger, "agent::get", { id: agentId }, { auth: ctx.auth });
    if (!agent?.realmId) throw notFound(`Agent ${agentId} not found`);
    return agent.realmId;
  };

  /** An agent's whole graph, with its place in the realm's index. */
  const forgetGraph = async (realmId: string, agentId: string): Promise<number> => {
    await state.delete(realmGraphsScope(realmId), agentId);
    const entities = await purgeGraph(state, agentId);
    graphs.forget(agentId);
    return entities;
  };

  worker.registerFunction(
    {
      id: "kg::add_temporal",
      description: "Add the next version of an entity to an agent's graph",
      input: addInput,
      metadata: ACTS_FOR_AGENT,
      output: entityVersion,
    },
    async (input, ctx) => {
      const realmId = await agentRealm(input.agentId, ctx);
      await requireRealm(trigger, realmId, { write: true });
      const added = await addVersion(state, graphs, realmId, input);
      // A realm delete that began meanwhile may have purged the graphs already: this one goes too.
      await recheckRealm(trigger, realmId, () => forgetGraph(realmId, input.agentId));
      return added;
    },
  );

  worker.registerFunction(
    {
      id: "kg::query_temporal",
      description: "An entity and what it reaches within depth, now or over a time range: its versions",
      input: queryInput,
      metadata: ACTS_FOR_AGENT,
      output: z.array(entityVersion),
    },
    async (input, ctx) => {
      await agentRealm(input.agentId, ctx);
      return queryTemporal(state, input);
    },
  );

  worker.registerFunction(
    {
      id: "kg::traverse",
      description: "Breadth-first from an entity: {adjacency, paths, nodeCount}",
      input: traverseInput,
      metadata: ACTS_FOR_AGENT,
      output: traversalAnswer,
    },
    async (input, ctx) => {
      await agentRealm(input.agentId, ctx);
      return traverse(state, input);
    },
  );

  worker.registerFunction(
    {
      id: "kg::timeline",
      description: "Every version of an entity, oldest first",
      input: timelineInput,
      metadata: ACTS_FOR_AGENT,
      output: timelineAnswer,
    },
    async ({ agentId, entity }, ctx) => {
      await agentRealm(agentId, ctx);
      return timeline(state, agentId, entity);
    },
  );

  worker.registerFunction(
    {
      id: "kg::diff",
      description: "An entity at timestamp1 against timestamp2: {added, removed, modified}",
      input: diffInput,
      metadata: ACTS_FOR_AGENT,
      output: diffAnswer,
    },
    async ({ agentId, entity, timestamp1, timestamp2 }, ctx) => {
      await agentRealm(agentId, ctx);
      return diff(state, agentId, entity, timestamp1, timestamp2);
    },
  );

  worker.registerFunction(
    {
      id: "kg::stats",
      description: "{totalEntities, totalRelations, avgDegree, connectedComponents} of an agent's graph",
      input: statsInput,
      metadata: ACTS_FOR_AGENT,
      output: statsAnswer,
    },
    async ({ agentId }, ctx) => {
      await agentRealm(agentId, ctx);
      return graphs.stats(agentId);
    },
  );

  worker.registerFunction(
    {
      id: "kg::purge_agent",
      description: "Delete a deleted agent's graph (agent delete)",
      input: purgeAgentInput,
    },
    async ({ realmId, agentId }, ctx) => {
      requireAdmin(ctx);
      return { agentId, entities: await forgetGraph(realmId, agentId) };
    },
  );

  worker.registerFunction(
    {
      id: "kg::purge_realm",
      description: "Delete the graphs of a realm's agents (realm delete)",
      input: purgeRealmInput,
    },
    async ({ realmId }, ctx) => {
      requireAdmin(ctx);
      const agents: string[] = [];
      for await (const { key } of state.scan(realmGraphsScope(realmId))) agents.push(key);
      for (const agentId of agents) {
        await purgeGraph(state, agentId);
        graphs.forget(agentId);
        await state.delete(realmGraphsScope(realmId), agentId);
      }
      return { purged: agents.length };
    },
  );

  registerTools(worker);

  for (const [name, functionId] of [
    ["add", "kg::add_temporal"],
    ["query", "kg::query_temporal"],
    ["traverse", "kg::traverse"],
    ["timeline", "kg::timeline"],
    ["diff", "kg::diff"],
    ["stats", "kg::stats"],
  ] as const) {
    worker.registerRoute(functionId, "POST", `/api/kg/${name}`, name === "add" ? { status: 201 } : {});
  }
  return {};
}

/** The graph as agent tools: each acts on the calling agent's own graph (the agent's id is filled in). */
function registerTools(worker: WorkerClient): void {
  const trigger = worker.trigger.bind(worker);
  worker.registerFunction(
    {
      id: "tool::kg_add",
      description:
        "Record a fact in your knowledge graph: an entity (name, type, properties) and its relations to other entities. Adding an entity again makes a new version; the old one stays in its history.",
      input: addInput,
      metadata: ACTS_FOR_AGENT,
      output: entityVersion,
    },
    (input) => call(trigger, "kg::add_temporal", input),
  );
  worker.registerFunction(
    {
      id: "tool::kg_query",
      description:
        "Look up an entity in your knowledge graph with what it is related to within depth steps; give timeRange {from, to} in epoch ms for what held back then.",
      input: queryInput,
      metadata: ACTS_FOR_AGENT,
      output: z.array(entityVersion),
    },
    (input) => call(trigger, "kg::query_temporal", input),
  );
  worker.registerFunction(
    {
      id: "tool::kg_visualize",
      description: "A Mermaid diagram of an entity's neighbourhood in your knowledge graph (depth 1–3).",
      input: z.strictObject({
        agentId: addInput.shape.agentId,
        entity: entityName("entity"),
        depth: z.number().int().min(1).max(3).default(2),
      }),
      metadata: ACTS_FOR_AGENT,
      output: z.object({ mermaid: z.string() }),
    },
    async ({ agentId, entity, depth }) => {
      const traversal = await call(trigger, "kg::traverse", {
        agentId,
        startEntity: entity,
        direction: "outgoing",
        maxDepth: depth,
        maxNodes: 50,
      });
      const entities = Object.keys(traversal.paths);
      const heads = await Promise.all(
        entities.map((name) => call(trigger, "kg::query_temporal", { agentId, entity: name, depth: 0 })),
      );
      return { mermaid: mermaidOf(heads.flat(), new Set(entities)) };
    },
  );
}
