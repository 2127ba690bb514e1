import { jsonSchema, type ToolSet, tool } from "ai";
import { actsForAgent, agentPrincipal } from "../../engine/acting-agent.ts";
import type { OutputOf } from "../../engine/call.ts";
import { report } from "../../engine/telemetry.ts";
import type { TriggerFn } from "../../engine/types.ts";
import { matchesPattern } from "../../shared/function-pattern.ts";
import { isInternalFunction } from "../../shared/internal-functions.ts";
import { isJsonObject } from "../../shared/json-object.ts";
import { inSpan } from "../../shared/tracing.ts";
import { chainMetadataHere } from "../../shared/workflow-chain.ts";
import type { Agent } from "./schema.ts";

export { matchesPattern };

/** What the agent may call: its capabilities, or without them exactly its tools plus memory::*. */
export function capabilityPatterns(agent: Pick<Agent, "capabilities" | "tools">): string[] {
  return agent.capabilities ?? [...agent.tools, "memory::*"];
}

export function mayCall(agent: Pick<Agent, "capabilities" | "tools">, functionId: string): boolean {
  if (isInternalFunction(functionId)) return false;
  return capabilityPatterns(agent).some((pattern) => matchesPattern(pattern, functionId));
}

/**
 * Tool names providers accept (`^[a-zA-Z0-9_-]{1,64}$`): `tool::web_fetch` → `tool__web_fetch`. The map
 * goes both ways, so a name always comes back to the exact function id, even when two ids collide.
 */
export function toolNames(ids: string[]): Map<string, string> {
  const byName = new Map<string, string>();
  for (const id of ids) {
    const base = id
      .replace(/::/g, "__")
      .replace(/[^A-Za-z0-9_-]/g, "_")
      .slice(0, 60);
    let name = base;
    for (let n = 2; byName.has(name); n++) name = `${base.slice(0, 57)}_${n}`;
    byName.set(name, id);
  }
  return byName;
}

/** Each built tool set's model-facing names → function ids (the set itself keys by name only). */
const functionIds = new WeakMap<ToolSet, Map<string, string>>();

/**
 * The function id a model-facing tool name stands for in `tools` (`tool__file_write` →
 * `tool::file_write`): what a reply tells its caller. A name the set does not hold stays as it is.
 */
export function functionIdOf(tools: ToolSet | undefined, name: string): string {
  return (tools && functionIds.get(tools)?.get(name)) ?? name;
}

/** What the engine tells of a function (engine::functions::info). */
export type FunctionInfo = OutputOf<"engine::functions::info">;

/** The agent's tools that exist now: its tool patterns expanded over registered functions, then capability-filtered. */
export function agentToolIds(agent: Pick<Agent, "tools" | "capabilities">, registered: string[]): string[] {
  return registered
    .filter((id) => agent.tools.some((pattern) => matchesPattern(pattern, id)))
    .filter((id) => mayCall(agent, id))
    .sort();
}

/**
 * A call the tools worker must clear first: a function outside tool:: (which gates its own calls) of an
 * agent with an approval policy. Without the tools worker the call fails, as a refused approval would.
 */
function gatedByPolicy(agent: Agent, functionId: string): boolean {
  if (functionId.startsWith("tool::")) return false;
  return Object.values(agent.toolPolicies ?? {}).some((policy) => policy.approval === "required");
}

export interface ToolRun {
  functionId: string;
  input: unknown;
  ok: boolean;
}

/**
 * The AI SDK tool set for a turn. A function that acts for the calling agent (ACTS_FOR_AGENT) gets the
 * agent's own id from the principal: the model neither sees nor chooses it. Every call is checked against the capabilities again and runs
 * through engine.trigger as the agent's realm; a failure goes back to the model as `{error}` instead of
 * ending the turn.
 */
export function buildToolSet(
  agent: Agent,
  infos: FunctionInfo[],
  trigger: TriggerFn,
  onRun: (run: ToolRun) => void,
): ToolSet {
  const names = toolNames(infos.map((info) => info.function_id));
  const byId = new Map(infos.map((info) => [info.function_id, info]));
  const tools: ToolSet = {};
  for (const [name, id] of names) {
    const info = byId.get(id);
    const forAgent = actsForAgent(info?.metadata);
    const schema = forAgent ? withoutAgentId(info?.request_schema) : objectSchema(info?.request_schema);
    tools[name] = tool({
      description: info?.description ?? id,
      inputSchema: jsonSchema(schema),
      execute: (input: unknown) =>
        inSpan("tool.call", { "agentos.tool": id, "agentos.agent.id": agent.id }, async () => {
          const started = performance.now();
          const tell = (outcome: "ok" | "error" | "denied") =>
            report(trigger, {
              type: "tool_call",
              tool: id,
              agentId: agent.id,
              outcome,
              durationMs: performance.now() - started,
              argumentNames: isJsonObject(input) ? Object.keys(input).slice(0, 100) : [],
            });
          if (!mayCall(agent, id)) {
            onRun({ functionId: id, input, ok: false });
            tell("denied");
            return { error: `Agent ${agent.id} may not call ${id}` };
          }
          const payload = isJsonObject(input) ? { ...input } : {};
          // What the model wrote never picks the agent: the engine fills in this one from the principal.
          if (forAgent) delete payload.agentId;
          try {
            if (gatedByPolicy(agent, id)) {
              await trigger({
                function_id: "tools::approval_gate",
                payload: { functionId: id, input: payload },
                auth: agentPrincipal(agent),
              });
            }
            // A remote worker's function has no async context of ours: the workflow chain the turn
            // runs under goes along as metadata (only that key), so a workflow it starts still nests.
            const metadata = chainMetadataHere();
            const result = await trigger({
              function_id: id,
              payload,
              auth: agentPrincipal(agent),
              ...(metadata ? { metadata } : {}),
            });
            onRun({ functionId: id, input, ok: true });
            tell("ok");
            return withinContext(result ?? null);
          } catch (error) {
            onRun({ functionId: id, input, ok: false });
            tell("error");
            return { error: (error as Error).message };
          }
        }),
    });
  }
  functionIds.set(tools, names);
  return tools;
}

/**
 * The most characters of one tool result (as JSON) a model is sent. Each tool bounds its own answer, but
 * some are large by nature (a file, a page, a composition of steps); past this, a result would crowd out
 * the conversation or exceed the model's context window (the provider refusing the whole turn).
 */
export const MAX_TOOL_RESULT_CHARS = 400_000;

/** The result as the model gets it: whole, or its JSON cut at MAX_TOOL_RESULT_CHARS with a note saying so. */
function withinContext(result: unknown): unknown {
  if (typeof result !== "object" && typeof result !== "string") return result;
  const text = typeof result === "string" ? result : (JSON.stringify(result) ?? "");
  if (text.length <= MAX_TOOL_RESULT_CHARS) return result;
  return {
    truncated: `the result had ${text.length} characters; these are its first ${MAX_TOOL_RESULT_CHARS}: ask for less (a range, a filter, a path)`,
    head: text.slice(0, MAX_TOOL_RESULT_CHARS),
  };
}

/** The input schema a model is shown: an object (a provider refuses anything else), no JSON Schema dialect. */
function objectSchema(schema: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!schema || !isJsonObject(schema.properties)) return { type: "object", properties: {} };
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}

/** The same without `agentId`, which the engine fills in for a function that acts for the agent. */
function withoutAgentId(schema: Record<string, unknown> | undefined): Record<string, unknown> {
  const shown = objectSchema(schema);
  const { agentId: _filled, ...properties } = shown.properties as Record<string, unknown>;
  const required = Array.isArray(shown.required)
    ? shown.required.filter((name) => name !== "agentId")
    : undefined;
  return { ...shown, properties, ...(required ? { required } : {}) };
}
