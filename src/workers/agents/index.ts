import type { ModelMessage } from "ai";
import { call } from "../../engine/call.ts";
import { stateClient } from "../../engine/state/client.ts";
import { isStorableText } from "../../engine/state/schema.ts";
import type { InvocationContext } from "../../engine/types.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { assertRealmAccess, realmFilter, requireAdmin } from "../../shared/access.ts";
import { conflict, notFound } from "../../shared/errors.ts";
import { openToRealm } from "../../shared/function-realms.ts";
import { PURGE_REALM_SUFFIX } from "../../shared/internal-functions.ts";
import { noContent } from "../../shared/outputs.ts";
import { inSpan } from "../../shared/tracing.ts";
import { agentCompletion, chatTurn } from "./chat.ts";
import type { ChatDeps } from "./chat-deps.ts";
import { DeletedAgents } from "./deleted-agents.ts";
import {
  agentsPage,
  createAgent,
  deleteAgent,
  type LifecycleDeps,
  purgeRealmAgents,
  updateAgent,
} from "./lifecycle.ts";
import { registerAgentMemory } from "./memory-routes.ts";
import { agentsNamed } from "./name-index.ts";
import { onceBackfilled } from "./realm-index.ts";
import {
  type Agent,
  agentCreated,
  agentIdInput,
  agentPage,
  agentRecord,
  agentResolved,
  agentWithTools,
  authorizeInput,
  authorizeVerdict,
  chatInput,
  completeInput,
  completionReply,
  createAgentInput,
  DEFAULT_REALM,
  listInput,
  messageReply,
  messageRouteInput,
  purgeRealmInput,
  resolveInput,
  sessionInput,
  sessionPage,
  sessionsInput,
  sessionWithMessages,
  updateAgentInput,
} from "./schema.ts";
import { AGENTS_SCOPE, getSession, sessionMessages, sessionsPage } from "./store.ts";
import { agentToolIds, mayCall } from "./tools.ts";

export interface AgentsOptions {
  env: NodeJS.ProcessEnv;
  /** Model calls per message, tool round trips included (default 8). */
  maxSteps?: number;
  /** Cluster mode: another node may delete an agent, so a turn ending reads its agent again. */
  cluster?: boolean;
}

/** Agents: CRUD, chat turns with sessions, memory and tools (DESIGN.md §5). */
export function registerAgents(worker: WorkerClient, options: AgentsOptions): void {
  const trigger = worker.trigger.bind(worker);
  const state = stateClient(trigger);
  const deleted = new DeletedAgents();
  const deps: ChatDeps = {
    trigger,
    state,
    env: options.env,
    maxSteps: options.maxSteps ?? 8,
    ...(options.cluster ? {} : { deleted }),
  };
  const lifecycle: LifecycleDeps = { trigger, state, backfilled: onceBackfilled(state), deleted };
  // Started now so the first request rarely waits; whatever reads the realm index awaits it anyway.
  lifecycle.backfilled().catch(() => undefined);

  /** The agent, if the caller may see it: another realm's agent reads as missing (404, same words). */
  const load = async (id: string, ctx: InvocationContext): Promise<Agent> => {
    const agent = await state.get<Agent>(AGENTS_SCOPE, id);
    if (!agent) throw notFound(`Agent ${id} not found`);
    assertRealmAccess(ctx, agent.realmId, `Agent ${id} not found`);
    return agent;
  };

  worker.registerFunction(
    {
      id: "agent::create",
      description: "Create an agent; returns {id}",
      input: createAgentInput,
      output: agentCreated,
    },
    (input, ctx) => createAgent(lifecycle, input, ctx),
  );

  worker.registerFunction(
    {
      id: "agent::list",
      description: "List agents, oldest first, of one realm with {realmId}: {agents, nextCursor}",
      input: listInput,
      output: agentPage,
    },
    async ({ realmId, limit, cursor }, ctx) => {
      if (realmId !== undefined) assertRealmAccess(ctx, realmId);
      return agentsPage(lifecycle, realmId ?? realmFilter(ctx), { limit, cursor });
    },
  );

  worker.registerFunction(
    {
      id: "agent::resolve",
      description: "The agent an id or name names, among those the caller may see: {agentId}; 404 when none",
      input: resolveInput,
      output: agentResolved,
    },
    async ({ model }, ctx) => {
      const visible = (realmId: string) => ctx.auth.kind !== "realm" || ctx.auth.realmId === realmId;
      const byId = isStorableText(model) ? await state.get<Agent>(AGENTS_SCOPE, model) : null;
      if (byId && visible(byId.realmId)) return { agentId: byId.id };
      const named = isStorableText(model) ? await agentsNamed(state, model) : [];
      const matches = named.filter((entry) => visible(entry.realmId));
      if (matches.length > 1) return { agentId: await oneOfNamed(model, matches) };
      if (!matches[0]) throw notFound(`No agent ${model}`);
      return { agentId: matches[0].agentId };
    },
  );

  /**
   * Names are unique per realm, so only a caller that sees every realm (an admin key) finds several
   * agents of one name. Taking the oldest, as before, let any tenant take a name first and receive the
   * operator's `/v1` conversations meant for the operator's own agent (kept in the tenant's session,
   * read by the tenant's tools). The default realm's agent is the one meant (admin keys that name no
   * realm work there); with none there, the name is ambiguous: 409, naming the agents to pick by id.
   */
  const oneOfNamed = async (name: string, matches: Array<{ agentId: string; realmId: string }>) => {
    const agents = await Promise.all(matches.map((match) => state.get<Agent>(AGENTS_SCOPE, match.agentId)));
    const live = agents.filter((agent): agent is Agent => agent !== null && agent.name === name);
    const own = live.filter((agent) => agent.realmId === DEFAULT_REALM);
    if (own.length === 1 && own[0]) return own[0].id;
    if (live.length === 1 && live[0]) return live[0].id;
    if (live.length === 0) throw notFound(`No agent ${name}`);
    const listed = live
      .slice(0, 5)
      .map((agent) => `agent:${agent.id} (realm ${agent.realmId})`)
      .join(", ");
    throw conflict(`Several agents are named "${name}": ${listed}; name one as agent:<id>`);
  };

  worker.registerFunction(
    {
      id: "agent::get",
      description: "An agent with its full configuration and resolvedTools: the functions its tools name now",
      input: agentIdInput,
      output: agentWithTools,
    },
    async ({ id }, ctx) => {
      const agent = await load(id, ctx);
      const { functions } = await call(trigger, "engine::functions::list", {});
      return {
        ...agent,
        resolvedTools: agentToolIds(
          agent,
          functions.filter((fn) => openToRealm(fn.metadata, agent.realmId)).map((fn) => fn.function_id),
        ),
      };
    },
  );

  worker.registerFunction(
    {
      id: "agent::update",
      description: "Change an agent's configuration (not its name or realm): the agent as it is now",
      input: updateAgentInput,
      output: agentRecord,
    },
    async (input, ctx) => updateAgent(lifecycle, await load(input.id, ctx), input),
  );

  worker.registerFunction(
    {
      id: "agent::delete",
      description: "Delete an agent and all its data (sessions, memory)",
      input: agentIdInput,
      output: noContent,
    },
    async ({ id }, ctx) => {
      await deleteAgent(lifecycle, await load(id, ctx));
      return undefined;
    },
  );

  worker.registerFunction(
    {
      id: `agent${PURGE_REALM_SUFFIX}`,
      description: "Delete every agent of {realmId} with all its data (part of realm::delete)",
      input: purgeRealmInput,
    },
    ({ realmId }, ctx) => {
      requireAdmin(ctx);
      return purgeRealmAgents(lifecycle, realmId);
    },
  );

  worker.registerFunction(
    {
      id: "agent::chat",
      description: "Send {message} to agent {agentId} in session {sessionId?}",
      input: chatInput,
      output: messageReply,
    },
    // ctx.signal aborts when the caller's timeout expires (a pulse's timeoutSecs): the turn stops with it.
    async ({ agentId, ...turn }, ctx) => {
      const agent = await load(agentId, ctx);
      return turnSpan(agent, () => chatTurn(deps, agent, turn, ctx.signal));
    },
  );

  worker.registerFunction(
    {
      id: "agent::authorize",
      description: "Which of {functionIds} agent {agentId} may not call: {denied}",
      input: authorizeInput,
      output: authorizeVerdict,
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
      output: completionReply,
    },
    async ({ agentId, messages, ...options }, ctx) => {
      const agent = await load(agentId, ctx);
      const call = { messages: messages as unknown as ModelMessage[], ...options };
      return turnSpan(agent, () => agentCompletion(deps, agent, call, ctx.signal, ctx.progress));
    },
  );

  worker.registerFunction(
    {
      id: "agent::message",
      description: "Talk to an agent: {content, model, usage, sessionId, toolCalls (with their output)}",
      input: messageRouteInput,
      output: messageReply,
    },
    async ({ id, stream: _stream, ...turn }, ctx) => {
      // `stream`: the route answers with server-sent events (it reads the turn's progress).
      const agent = await load(id, ctx);
      const reply = await turnSpan(agent, () => chatTurn(deps, agent, turn, ctx.signal, ctx.progress));
      return {
        content: reply.content,
        model: reply.model,
        usage: reply.usage,
        sessionId: reply.sessionId,
        toolCalls: reply.toolCalls,
      };
    },
  );

  worker.registerFunction(
    {
      id: "agent::sessions",
      description: "An agent's sessions, newest first: {sessions, nextCursor}",
      input: sessionsInput,
      output: sessionPage,
    },
    async ({ id, limit, cursor }, ctx) => {
      await load(id, ctx);
      return sessionsPage(state, id, { limit, cursor });
    },
  );

  worker.registerFunction(
    {
      id: "agent::session",
      description:
        "One session of an agent with a page of its messages, oldest first (tool calls included): {session, messages, nextCursor}",
      input: sessionInput,
      output: sessionWithMessages,
    },
    async ({ id, sessionId, limit, cursor }, ctx) => {
      await load(id, ctx);
      const session = await getSession(state, id, sessionId);
      if (!session) throw notFound(`Session ${sessionId} of agent ${id} not found`);
      return { session, ...(await sessionMessages(state, id, sessionId, { limit, cursor })) };
    },
  );

  registerAgentMemory(worker, load);

  worker.registerRoute("agent::list", "GET", "/api/agents");
  worker.registerRoute("agent::create", "POST", "/api/agents", { status: 201 });
  worker.registerRoute("agent::get", "GET", "/api/agents/:id");
  worker.registerRoute("agent::update", "PATCH", "/api/agents/:id");
  worker.registerRoute("agent::delete", "DELETE", "/api/agents/:id");
  worker.registerRoute("agent::message", "POST", "/api/agents/:id/message", { progress_stream: true });
  worker.registerRoute("agent::sessions", "GET", "/api/agents/:id/sessions");
  worker.registerRoute("agent::session", "GET", "/api/agents/:id/sessions/:sessionId");
}

/** An agent's turn as a trace span: the model calls and tool calls it makes are its children. */
function turnSpan<T>(agent: Agent, work: () => Promise<T>): Promise<T> {
  return inSpan("agent.turn", { "agentos.agent.id": agent.id, "agentos.realm.id": agent.realmId }, work);
}
