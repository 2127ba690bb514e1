import type { ModelMessage } from "ai";
import { call } from "../../engine/call.ts";
import { systemPrincipal } from "../../engine/types.ts";
import { resolveChoice } from "../../llm/choice.ts";
import { generate } from "../../llm/generate.ts";
import { assertProviderOpen, assertRealmOpen } from "../../llm/guards.ts";
import type { GenerateResult, ModelChoice, TurnEvent, TurnProgress, Usage } from "../../llm/types.ts";
import { nowIso } from "../../shared/clock.ts";
import { conflict, isFunctionNotFound, notFound } from "../../shared/errors.ts";
import { AGENT_DELETING } from "../../shared/realm-refs.ts";
import { checkBudget, recordTurnCost } from "./accounting.ts";
import type { ChatDeps } from "./chat-deps.ts";
import type { Agent } from "./schema.ts";
import {
  AGENTS_SCOPE,
  appendTurn,
  deleteConversations,
  openSession,
  recentMessages,
  type StoredMessage,
} from "./store.ts";
import { keepExchange } from "./threads.ts";
import { abortableTools, toolsFor } from "./tool-sets.ts";
import { functionIdOf } from "./tools.ts";
import { recall, remember } from "./turn-memory.ts";

export interface ChatTurn {
  message: string;
  sessionId?: string;
  context?: unknown;
}

export interface ChatReply {
  content: string;
  model: string;
  usage: Usage;
  sessionId: string;
  toolCalls: GenerateResult["toolCalls"];
}

const HISTORY_LIMIT = 200;

/** Rough token count (4 characters a token): enough to keep a prompt inside the window. */
const tokensOf = (text: string) => Math.ceil(text.length / 4);

/**
 * One turn: the agent's prompt, the session's recent history trimmed to the model's window, relevant
 * memories, and its tools; the reply is stored in the session and in memory. A ledger check runs
 * before each model call when a ledger exists, and every call's cost is published on `cost.incurred`.
 *
 * `signal` is the invocation's (aborted when the caller's timeout expires): the model call is aborted
 * with it, no further model call or tool call starts, and an aborted turn stores nothing, so a turn the
 * caller gave up on neither goes on running nor appears in the session afterwards.
 */
export async function chatTurn(
  deps: ChatDeps,
  agent: Agent,
  turn: ChatTurn,
  signal?: AbortSignal,
  progress?: (event: TurnProgress) => void,
): Promise<ChatReply> {
  const choices = await modelChoices(deps, agent);
  const primary = choices[0] as ModelChoice;
  const registered = await registeredFunctions(deps);
  const session = await openSession(deps.state, agent.id, turn.sessionId, turn.message);
  const system = await systemPrompt(deps, registered, agent, turn.message, turn.context);
  const history = trimToWindow(
    await recentMessages(deps.state, agent.id, session, HISTORY_LIMIT),
    primary.model.contextWindow -
      (agent.maxTokens ?? Math.min(primary.model.maxOutput, 4096)) -
      tokensOf(system) -
      tokensOf(turn.message),
  );
  const messages: ModelMessage[] = [
    ...history.map((m) => ({ role: m.role, content: m.content }) as ModelMessage),
    { role: "user", content: turn.message },
  ];
  const { result, costs } = await answerOf(deps, registered, agent, choices, {
    system,
    messages,
    sessionId: session.id,
    signal,
    progress,
    functionIds: true,
  });
  // The reply came too late: the caller has given up on this turn, so it is not kept.
  if (signal?.aborted) {
    await Promise.allSettled(costs);
    signal.throwIfAborted();
  }
  const now = nowIso();
  const stored: StoredMessage[] = [
    { role: "user", content: turn.message, createdAt: now },
    {
      role: "assistant",
      content: result.content,
      createdAt: now,
      ...(result.toolCalls.length > 0 ? { toolCalls: result.toolCalls } : {}),
    },
  ];
  // Stored before the answer goes out, so an answered turn's costs, messages and memories survive a
  // crash; together, so that they share one commit.
  await Promise.all([
    ...costs,
    appendTurn(deps.state, session, stored),
    registered.has("memory::store") ? remember(deps, registered, agent, session.id, stored) : undefined,
  ]);
  await recheckAgent(deps, agent.id);
  return {
    content: result.content,
    model: result.model,
    usage: result.usage,
    sessionId: session.id,
    toolCalls: result.toolCalls,
  };
}

export interface AgentCompletion {
  /** The whole conversation, as the caller keeps it (OpenAI clients send it every time). */
  messages: ModelMessage[];
  /** Caller-side system text, added after the agent's own prompt. */
  system?: string;
  temperature?: number;
  maxTokens?: number;
  /** False: the model answers without the agent's tools (a tool that asks the agent's model, say). */
  withTools?: boolean;
  /** Keep the exchange in the session this conversation continues (the `/v1` endpoint's default). */
  keep?: boolean;
}

/** The agent answering a conversation it is given (the OpenAI-compatible endpoint): no session is kept. */
export async function agentCompletion(
  deps: ChatDeps,
  agent: Agent,
  call: AgentCompletion,
  signal?: AbortSignal,
  progress?: (event: TurnProgress) => void,
): Promise<GenerateResult & { sessionId?: string }> {
  const choices = await modelChoices(deps, agent);
  const registered = await registeredFunctions(deps);
  const lastUser = [...call.messages].reverse().find((m) => m.role === "user");
  const query =
    typeof lastUser?.content === "string" ? lastUser.content : JSON.stringify(lastUser?.content ?? "");
  const system = [await systemPrompt(deps, registered, agent, query, undefined), call.system]
    .filter(Boolean)
    .join("\n\n");
  const { result, costs } = await answerOf(deps, registered, agent, choices, {
    system,
    messages: call.messages,
    sessionId: null,
    temperature: call.temperature,
    maxTokens: call.maxTokens,
    withTools: call.withTools,
    signal,
    progress,
  });
  if (!call.keep) {
    await Promise.all(costs);
    return result;
  }
  if (signal?.aborted) {
    await Promise.allSettled(costs);
    signal.throwIfAborted();
  }
  const [sessionId] = await Promise.all([
    keepExchange(deps.state, agent.id, call.messages, result),
    ...costs,
  ]);
  await recheckAgent(deps, agent.id);
  return { ...result, sessionId };
}

/**
 * The agent may have been deleted while its turn ran: agent::delete marks it `deleting` before it purges
 * its memory and sessions (a realm delete removes its record), so a turn whose writes came after the
 * purge sees that here and takes them away again — all of the agent's, as the delete meant — and answers
 * 404 as for any missing agent. Writes made before the mark are found by the purge itself. Without this,
 * a deleted agent's last session, messages and memories stayed in the store for good.
 */
async function recheckAgent(deps: ChatDeps, agentId: string): Promise<void> {
  if (deps.deleted) {
    if (!deps.deleted.has(agentId)) return;
  } else {
    const stored = await deps.state.get<{ status: string }>(AGENTS_SCOPE, agentId);
    if (stored && stored.status !== AGENT_DELETING) return;
  }
  await deps
    .trigger({ function_id: "memory::forget_agent", payload: { agentId }, auth: systemPrincipal })
    .catch((error) => {
      if (!isFunctionNotFound(error)) throw error;
    });
  await deleteConversations(deps.state, agentId);
  throw notFound(`Agent ${agentId} not found`);
}

/**
 * The model's answer and its costs, recorded as each call is answered: the caller awaits them together
 * with the turn's own writes. When the model fails, what was recorded is waited for first.
 */
async function answerOf(
  deps: ChatDeps,
  registered: Set<string>,
  agent: Agent,
  choices: ModelChoice[],
  call: ModelCall,
): Promise<{ result: GenerateResult; costs: Array<Promise<void>> }> {
  const costs: Array<Promise<void>> = [];
  try {
    return { result: await runModel(deps, registered, agent, choices, call, costs), costs };
  } catch (error) {
    await Promise.allSettled(costs);
    throw error;
  }
}

async function modelChoices(deps: ChatDeps, agent: Agent): Promise<ModelChoice[]> {
  if (agent.status !== "active")
    throw conflict(`Agent ${agent.id} is ${agent.status} and does not take messages`);
  await assertRealmOpen(deps.trigger, agent.realmId);
  const choices = await Promise.all(
    [agent.model, ...(agent.fallbackModels ?? [])].map((m) => resolveChoice(deps.trigger, m)),
  );
  for (const choice of choices) assertProviderOpen(choice.provider, agent.realmId);
  return choices;
}

/** One listing per turn tells which optional functions (memory, ledger, tools) exist right now. */
async function registeredFunctions(deps: ChatDeps): Promise<Set<string>> {
  const { ids } = await call(deps.trigger, "engine::functions::ids", {});
  // The engine answers the same array until a function comes or goes: so does this.
  if (ids !== lastIds.ids) lastIds = { ids, set: new Set(ids) };
  return lastIds.set;
}

let lastIds: { ids: string[] | null; set: Set<string> } = { ids: null, set: new Set() };

interface ModelCall {
  system: string;
  messages: ModelMessage[];
  sessionId: string | null;
  temperature?: number;
  maxTokens?: number;
  withTools?: boolean;
  signal?: AbortSignal;
  progress?: (event: TurnProgress) => void;
  /**
   * Tool calls told (events and result) by their function ids, not the names the model had to use:
   * the agent's own API speaks function ids; the OpenAI-compatible endpoint keeps the model's names.
   */
  functionIds?: boolean;
}

async function runModel(
  deps: ChatDeps,
  registered: Set<string>,
  agent: Agent,
  choices: ModelChoice[],
  call: ModelCall,
  costs: Array<Promise<void>>,
): Promise<GenerateResult> {
  const { signal } = call;
  const primary = choices[0] as ModelChoice;
  const tools =
    primary.model.supportsTools && call.withTools !== false
      ? await toolsFor(deps, registered, agent)
      : undefined;
  const ledger = registered.has("ledger::check");
  if (ledger) await checkBudget(deps, agent);
  // Whatever the set-up awaited, no model call starts once the caller has given up.
  signal?.throwIfAborted();
  const named = call.functionIds ? (name: string) => functionIdOf(tools, name) : (name: string) => name;
  const progress = call.progress;
  // Told once every check passed: a streamed reply opens only now, so a refusal is still a status.
  progress?.({ type: "start", model: primary.model.id, sessionId: call.sessionId });
  const result = await generate({
    // DESIGN §5: the ledger is asked before every model call of the turn (this covers the later ones).
    // An aborted turn stops here too: its tool loop makes no further model call.
    beforeStep: async () => {
      signal?.throwIfAborted();
      // A realm paused (or going away) since the turn began takes no further model call either.
      await assertRealmOpen(deps.trigger, agent.realmId);
      // The previous calls' costs are counted before the ledger is asked again.
      await Promise.all(costs);
      if (ledger) await checkBudget(deps, agent);
    },
    abortSignal: signal,
    choices,
    system: call.system,
    messages: call.messages,
    tools: tools && signal ? abortableTools(tools, signal) : tools,
    maxSteps: deps.maxSteps,
    temperature: call.temperature ?? agent.temperature,
    maxTokens: call.maxTokens ?? agent.maxTokens,
    env: deps.env,
    trigger: deps.trigger,
    // Not awaited by the model's loop: the turn awaits each cost with its own writes (see chatTurn).
    onStepUsage: (choice, usage) => {
      costs.push(recordTurnCost(deps, agent, call.sessionId, choice, usage));
    },
    ...(progress ? { onEvent: (event) => progress(renamed(event, named)) } : {}),
  });
  return { ...result, toolCalls: result.toolCalls.map((toolCall) => renamed(toolCall, named)) };
}

/** A tool call or event with its tool named by `named` (anything else as it is). */
function renamed<T extends { toolName?: string } | TurnEvent>(item: T, named: (name: string) => string): T {
  return "toolName" in item && typeof item.toolName === "string"
    ? { ...item, toolName: named(item.toolName) }
    : item;
}

/** Newest messages that fit the token budget, oldest first. */
export function trimToWindow(messages: StoredMessage[], budget: number): StoredMessage[] {
  const kept: StoredMessage[] = [];
  let used = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as StoredMessage;
    used += tokensOf(message.content) + 4;
    if (used > budget) break;
    kept.unshift(message);
  }
  return kept;
}

async function systemPrompt(
  deps: ChatDeps,
  registered: Set<string>,
  agent: Agent,
  query: string,
  context: unknown,
): Promise<string> {
  const parts = [
    agent.systemPrompt ?? `You are ${agent.name}${agent.description ? `: ${agent.description}` : ""}.`,
  ];
  const memories = registered.has("memory::recall") ? await recall(deps, agent.id, query) : [];
  if (memories.length > 0) parts.push(`Relevant memories:\n${memories.map((m) => `- ${m}`).join("\n")}`);
  if (context !== undefined) parts.push(`Context:\n${JSON.stringify(context)}`);
  return parts.join("\n\n");
}
