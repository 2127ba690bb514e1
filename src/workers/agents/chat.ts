import type { ModelMessage } from "ai";
import type { StateClient } from "../../engine/state/client.ts";
import type { TriggerFn } from "../../engine/types.ts";
import { generate, type ModelChoice } from "../../llm/generate.ts";
import { costOf, type ModelEntry, type ProviderEntry, type Usage } from "../../llm/types.ts";
import { nowIso } from "../../shared/clock.ts";
import { AppError, conflict } from "../../shared/errors.ts";
import type { Agent } from "./schema.ts";
import { appendTurn, openSession, recentMessages, type StoredMessage } from "./store.ts";
import { agentToolIds, buildToolSet, type FunctionInfo } from "./tools.ts";

export interface ChatDeps {
  trigger: TriggerFn;
  state: StateClient;
  env: NodeJS.ProcessEnv;
  /** Model calls per turn, tool round trips included. */
  maxSteps: number;
}

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
  toolCalls: Array<{ toolName: string; input: unknown }>;
}

const HISTORY_LIMIT = 200;
const MEMORY_HITS = 5;

/** Rough token count (4 characters a token): enough to keep a prompt inside the window. */
const tokensOf = (text: string) => Math.ceil(text.length / 4);

/** A model and its provider from the catalog (an id or alias). */
export async function resolveChoice(trigger: TriggerFn, model: string): Promise<ModelChoice> {
  const entry = (await trigger({ function_id: "catalog::resolve", payload: { model } })) as ModelEntry;
  const provider = (await trigger({
    function_id: "catalog::provider",
    payload: { id: entry.provider },
  })) as ProviderEntry;
  return { model: entry, provider };
}

/**
 * One turn: the agent's prompt, the session's recent history trimmed to the model's window, relevant
 * memories, and its tools; the reply is stored in the session and in memory. A ledger check runs
 * before each model call when a ledger exists, and every call's cost is published on `cost.incurred`.
 */
export async function chatTurn(deps: ChatDeps, agent: Agent, turn: ChatTurn): Promise<ChatReply> {
  if (agent.status !== "active")
    throw conflict(`Agent ${agent.id} is ${agent.status} and does not take messages`);
  const choices = await Promise.all(
    [agent.model, ...(agent.fallbackModels ?? [])].map((m) => resolveChoice(deps.trigger, m)),
  );
  const primary = choices[0] as ModelChoice;
  const session = await openSession(deps.state, agent.id, turn.sessionId, turn.message);
  const system = await systemPrompt(deps, agent, turn);
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
  const tools = primary.model.supportsTools ? await toolsFor(deps, agent) : undefined;
  await checkBudget(deps, agent);
  const result = await generate({
    choices,
    system,
    messages,
    tools,
    maxSteps: deps.maxSteps,
    temperature: agent.temperature,
    maxTokens: agent.maxTokens,
    env: deps.env,
    trigger: deps.trigger,
    onStepUsage: (choice, usage) => publishCost(deps, agent, session.id, choice, usage),
  });
  const now = nowIso();
  await appendTurn(deps.state, session, [
    { role: "user", content: turn.message, createdAt: now },
    { role: "assistant", content: result.content, createdAt: now },
  ]);
  remember(deps, agent, session.id, [
    { role: "user", content: turn.message, createdAt: now },
    { role: "assistant", content: result.content, createdAt: now },
  ]);
  return {
    content: result.content,
    model: result.model,
    usage: result.usage,
    sessionId: session.id,
    toolCalls: result.toolCalls,
  };
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

async function systemPrompt(deps: ChatDeps, agent: Agent, turn: ChatTurn): Promise<string> {
  const parts = [
    agent.systemPrompt ?? `You are ${agent.name}${agent.description ? `: ${agent.description}` : ""}.`,
  ];
  const memories = await recall(deps, agent.id, turn.message);
  if (memories.length > 0) parts.push(`Relevant memories:\n${memories.map((m) => `- ${m}`).join("\n")}`);
  if (turn.context !== undefined) parts.push(`Context:\n${JSON.stringify(turn.context)}`);
  return parts.join("\n\n");
}

/** Memories are an enrichment: with no memory worker, or when it fails, the turn goes on without them. */
async function recall(deps: ChatDeps, agentId: string, query: string): Promise<string[]> {
  try {
    const found = (await deps.trigger({
      function_id: "memory::recall",
      payload: { agentId, query: query.slice(0, 2000), limit: MEMORY_HITS },
    })) as { results?: Array<{ content?: string }> };
    return (found.results ?? []).map((entry) => String(entry.content ?? "")).filter(Boolean);
  } catch {
    return [];
  }
}

function remember(deps: ChatDeps, agent: Agent, sessionId: string, turn: StoredMessage[]): void {
  for (const message of turn) {
    deps
      .trigger({
        function_id: "memory::store",
        payload: {
          agentId: agent.id,
          sessionId,
          role: message.role,
          content: message.content.slice(0, 32_768),
        },
        action: { type: "void" },
      })
      .catch(() => undefined);
  }
}

async function toolsFor(deps: ChatDeps, agent: Agent) {
  const listed = (await deps.trigger({ function_id: "engine::functions::list", payload: {} })) as {
    functions: Array<{ function_id: string }>;
  };
  const ids = agentToolIds(
    agent,
    listed.functions.map((fn) => fn.function_id),
  );
  if (ids.length === 0) return undefined;
  const infos = (await Promise.all(
    ids.map((id) => deps.trigger({ function_id: "engine::functions::info", payload: { function_id: id } })),
  )) as FunctionInfo[];
  return buildToolSet(agent, infos, deps.trigger, (run) => {
    if (run.ok) return;
    void deps.trigger({
      function_id: "security::audit",
      payload: { type: "tool_call_failed", detail: { agentId: agent.id, functionId: run.functionId } },
      action: { type: "void" },
    });
  });
}

/** Fail-safe: only an explicit "not allowed" from a ledger stops the call; no ledger, or a failing one, allows. */
async function checkBudget(deps: ChatDeps, agent: Agent): Promise<void> {
  let verdict: { allowed?: boolean; reason?: string } | undefined;
  try {
    verdict = (await deps.trigger({
      function_id: "ledger::check",
      payload: { agentId: agent.id, realmId: agent.realmId },
    })) as typeof verdict;
  } catch {
    return;
  }
  if (verdict?.allowed === false) {
    throw new AppError("budget_exceeded", verdict.reason ?? `Agent ${agent.id} is over its budget`);
  }
}

function publishCost(
  deps: ChatDeps,
  agent: Agent,
  sessionId: string,
  choice: ModelChoice,
  usage: Usage,
): void {
  const data = {
    agentId: agent.id,
    realmId: agent.realmId,
    sessionId,
    model: choice.model.id,
    provider: choice.provider.id,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cost: costOf(choice.model, usage),
    at: nowIso(),
  };
  void deps.trigger({
    function_id: "publish",
    payload: { topic: "cost.incurred", data },
    action: { type: "void" },
  });
}
