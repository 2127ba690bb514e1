import type { ToolSet } from "ai";
import { call } from "../../engine/call.ts";
import { openToRealm } from "../../shared/function-realms.ts";
import type { ChatDeps } from "./chat-deps.ts";
import type { Agent } from "./schema.ts";
import { agentToolIds, buildToolSet } from "./tools.ts";

/**
 * Tools that give up with the turn: a call made after the abort does not start, and one in flight is
 * answered with the abort at once (the function it called finishes under its own timeout), so the tool
 * loop does not wait for it.
 */
export function abortableTools(tools: ToolSet, signal: AbortSignal): ToolSet {
  const wrapped: ToolSet = {};
  for (const [name, entry] of Object.entries(tools)) {
    const execute = entry.execute as ((input: unknown, options: unknown) => unknown) | undefined;
    wrapped[name] = execute
      ? ({
          ...entry,
          execute: (input: unknown, options: unknown) => {
            signal.throwIfAborted();
            return untilAborted(Promise.resolve(execute(input, options)), signal);
          },
        } as ToolSet[string])
      : entry;
  }
  return wrapped;
}

/** `work`'s outcome, or the abort reason as soon as `signal` aborts. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * An agent's tool set is the same from turn to turn until the agent changes (its `updatedAt`) or a
 * function comes or goes (a new `registered` set): built once then, not on every turn (it cost four
 * engine calls and the schemas' conversion each time).
 */
const toolSets = new WeakMap<Set<string>, Map<string, Promise<ToolSet | undefined>>>();
const MAX_CACHED_TOOL_SETS = 1000;

export function toolsFor(
  deps: ChatDeps,
  registered: Set<string>,
  agent: Agent,
): Promise<ToolSet | undefined> {
  const byAgent = toolSets.get(registered) ?? new Map<string, Promise<ToolSet | undefined>>();
  toolSets.set(registered, byAgent);
  const key = `${agent.id}\u0000${agent.updatedAt}`;
  const cached = byAgent.get(key);
  if (cached) return cached;
  if (byAgent.size >= MAX_CACHED_TOOL_SETS) byAgent.clear();
  const built = buildTools(deps, registered, agent);
  byAgent.set(key, built);
  // A failed build is not kept: the next turn tries again.
  built.catch(() => byAgent.delete(key));
  return built;
}

async function buildTools(deps: ChatDeps, registered: Set<string>, agent: Agent) {
  const ids = agentToolIds(agent, [...registered]);
  if (ids.length === 0) return undefined;
  const infos = (
    await Promise.all(ids.map((id) => call(deps.trigger, "engine::functions::info", { function_id: id })))
  ).filter((info) => openToRealm(info.metadata, agent.realmId));
  if (infos.length === 0) return undefined;
  return buildToolSet(agent, infos, deps.trigger, (run) => {
    if (run.ok) return;
    void deps.trigger({
      function_id: "security::audit",
      payload: { type: "tool_call_failed", detail: { agentId: agent.id, functionId: run.functionId } },
      action: { type: "void" },
    });
  });
}
