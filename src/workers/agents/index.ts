import type { ModelMessage } from "ai";
import { stateClient } from "../../engine/state/client.ts";
import type { InvocationContext } from "../../engine/types.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { assertRealmAccess, realmFilter } from "../../shared/access.ts";
import { nowIso } from "../../shared/clock.ts";
import { type AppError, notFound } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { agentCompletion, type ChatDeps, chatTurn } from "./chat.ts";
import {
  type Agent,
  agentIdInput,
  authorizeInput,
  chatInput,
  completeInput,
  createAgentInput,
  DEFAULT_REALM,
  memoryRouteInput,
  messageRouteInput,
  profilePatterns,
} from "./schema.ts";
import { AGENTS_SCOPE, deleteAgentData, listAgents, listSessions } from "./store.ts";
import { mayCall } from "./tools.ts";

export interface AgentsOptions {
  env: NodeJS.ProcessEnv;
  /** Model calls per message, tool round trips included (default 8). */
  maxSteps?: number;
}

/** Agents: CRUD, chat turns with sessions, memory and tools (DESIGN.md §5). */
export function registerAgents(worker: WorkerClient, options: AgentsOptions): void {
  const trigger = worker.trigger.bind(worker);
  const state = stateClient(trigger);
  const deps: ChatDeps = { trigger, state, env: options.env, maxSteps: options.maxSteps ?? 8 };

  /** The agent, if the caller may see it: another realm's agent reads as 403, a missing one 404. */
  const load = async (id: string, ctx: InvocationContext): Promise<Agent> => {
    const agent = await state.get<Agent>(AGENTS_SCOPE, id);
    if (!agent) throw notFound(`Agent ${id} not found`);
    assertRealmAccess(ctx, agent.realmId);
    return agent;
  };

  worker.registerFunction(
    { id: "agent::create", description: "Create an agent; returns {id}", input: createAgentInput },
    async (input, ctx) => {
      const realmId = input.realmId ?? (ctx.auth.kind === "realm" ? ctx.auth.realmId : DEFAULT_REALM);
      assertRealmAccess(ctx, realmId);
      const model = input.model
        ? await trigger({ function_id: "catalog::resolve", payload: { model: input.model } })
        : await trigger({ function_id: "catalog::default_model", payload: {} });
      for (const fallback of input.fallbackModels ?? []) {
        await trigger({ function_id: "catalog::resolve", payload: { model: fallback } });
      }
      const now = nowIso();
      const agent: Agent = {
        ...input,
        id: newId("agent"),
        model: (model as { id: string }).id,
        tools: input.tools ?? profilePatterns[input.toolProfile],
        realmId,
        status: "active",
        createdAt: now,
        updatedAt: now,
      };
      await state.set(AGENTS_SCOPE, agent.id, agent, 0);
      return { id: agent.id };
    },
  );

  worker.registerFunction(
    { id: "agent::list", description: "List agents: {agents}" },
    async (_input, ctx) => ({
      agents: await listAgents(state, realmFilter(ctx)),
    }),
  );

  worker.registerFunction(
    { id: "agent::get", description: "An agent with its full configuration", input: agentIdInput },
    ({ id }, ctx) => load(id, ctx),
  );

  worker.registerFunction(
    {
      id: "agent::delete",
      description: "Delete an agent and all its data (sessions, memory)",
      input: agentIdInput,
    },
    async ({ id }, ctx) => {
      await load(id, ctx);
      // Memory first: if it cannot be forgotten the delete fails and can be retried, rather than
      // answering 204 with the agent's memory left behind. Only an absent memory worker is skipped.
      await trigger({ function_id: "memory::forget_agent", payload: { agentId: id } }).catch((error) => {
        if ((error as AppError).reason !== "function_not_found") throw error;
      });
      await deleteAgentData(state, id);
      return undefined;
    },
  );

  worker.registerFunction(
    {
      id: "agent::chat",
      description: "Send {message} to agent {agentId} in session {sessionId?}",
      input: chatInput,
    },
    async ({ agentId, ...turn }, ctx) => chatTurn(deps, await load(agentId, ctx), turn),
  );

  worker.registerFunction(
    {
      id: "agent::authorize",
      description: "Which of {functionIds} agent {agentId} may not call: {denied}",
      input: authorizeInput,
    },
    async ({ agentId, functionIds }, ctx) => {
      const agent = await load(agentId, ctx);
      return { denied: functionIds.filter((id) => !mayCall(agent, id)) };
    },
  );

  worker.registerFunction(
    {
      id: "agent::complete",
      description: "The agent answering a whole conversation {messages} without a session",
      input: completeInput,
    },
    async ({ agentId, messages, ...options }, ctx) =>
      agentCompletion(deps, await load(agentId, ctx), {
        messages: messages as unknown as ModelMessage[],
        ...options,
      }),
  );

  worker.registerFunction(
    {
      id: "agent::message",
      description: "Talk to an agent: {content, model, usage, sessionId}",
      input: messageRouteInput,
    },
    async ({ id, ...turn }, ctx) => {
      const reply = await chatTurn(deps, await load(id, ctx), turn);
      return { content: reply.content, model: reply.model, usage: reply.usage, sessionId: reply.sessionId };
    },
  );

  worker.registerFunction(
    {
      id: "agent::sessions",
      description: "An agent's sessions, newest first: {sessions}",
      input: agentIdInput,
    },
    async ({ id }, ctx) => {
      await load(id, ctx);
      return { sessions: await listSessions(state, id) };
    },
  );

  worker.registerFunction(
    { id: "agent::memory", description: "Search an agent's memory: {results}", input: memoryRouteInput },
    async ({ id, query, limit }, ctx) => {
      await load(id, ctx);
      return trigger({ function_id: "memory::recall", payload: { agentId: id, query, limit } });
    },
  );

  worker.registerRoute("agent::list", "GET", "/api/agents");
  worker.registerRoute("agent::create", "POST", "/api/agents", { status: 201 });
  worker.registerRoute("agent::get", "GET", "/api/agents/:id");
  worker.registerRoute("agent::delete", "DELETE", "/api/agents/:id");
  worker.registerRoute("agent::message", "POST", "/api/agents/:id/message");
  worker.registerRoute("agent::sessions", "GET", "/api/agents/:id/sessions");
  worker.registerRoute("agent::memory", "POST", "/api/agents/:id/memory");
}
