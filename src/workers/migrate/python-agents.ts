import type { Node } from "web-tree-sitter";
import type { Skipped, SourceAgent, SourceTool, SourceWorkflow } from "./model.ts";
import {
  argument,
  calleeName,
  calleeText,
  calls,
  decoratedFunctions,
  docstring,
  keywordArgs,
  lineOf,
  listItems,
  numberValue,
  type PythonModule,
  positionalArgs,
  resolve,
  stringValue,
} from "./python.ts";

/** What LangChain and LangGraph code declares: agents, the tools it defines, graphs of agents. */
export interface PythonProject {
  agents: Array<SourceAgent & { variable?: string }>;
  tools: SourceTool[];
  workflows: SourceWorkflow[];
  skipped: Skipped[];
}

const AGENT_FACTORIES = new Set([
  "create_react_agent",
  "create_agent",
  "create_tool_calling_agent",
  "create_openai_tools_agent",
  "create_openai_functions_agent",
  "create_structured_chat_agent",
  "initialize_agent",
]);
const MODEL_CLASSES = /^(Chat[A-Z]\w*|init_chat_model|OpenAI|AzureChatOpenAI)$/;
const TOOL_CLASSES = new Set(["Tool", "StructuredTool", "from_function"]);
const PROMPT_KEYWORDS = ["prompt", "state_modifier", "messages_modifier", "system_prompt", "system_message"];

export function readPythonAgents(modules: PythonModule[]): PythonProject {
  const project: PythonProject = { agents: [], tools: [], workflows: [], skipped: [] };
  const toolVars = new Map<string, string>();
  for (const module of modules) {
    for (const { fn, decoratorNode } of decoratedFunctions(module, new Set(["tool"]))) {
      const fnName = fn.childForFieldName("name")?.text ?? "tool";
      const call = decoratorNode.namedChildren[0];
      const named = call?.type === "call" ? stringValue(module, positionalArgs(call)[0]) : undefined;
      const name = named ?? fnName;
      toolVars.set(fnName, name);
      project.tools.push({ name, description: docstring(module, fn), source: lineOf(module, fn) });
    }
    for (const call of calls(module, TOOL_CLASSES)) {
      if (calleeName(call) === "from_function" && !calleeText(call).includes("StructuredTool")) continue;
      const name = stringValue(module, argument(call, ["name"]));
      if (!name) continue;
      const variable = assignedName(call);
      if (variable) toolVars.set(variable, name);
      project.tools.push({
        name,
        description: stringValue(module, argument(call, ["description"])),
        source: lineOf(module, call),
      });
    }
  }
  const names = new Set<string>();
  for (const module of modules) {
    for (const call of calls(module, AGENT_FACTORIES)) {
      const agent = agentOf(module, call, toolVars);
      if (names.has(agent.name)) agent.name = `${agent.name}-${call.startPosition.row + 1}`;
      names.add(agent.name);
      project.agents.push(agent);
    }
  }
  // A project's own tools are kept only where an agent uses them; the rest are reported.
  const used = new Set(project.agents.flatMap((agent) => agent.tools));
  for (const tool of project.tools.filter((tool) => !used.has(tool.name)))
    project.skipped.push({ type: "tool", name: tool.name, reason: "no agent uses it", source: tool.source });
  project.tools = project.tools.filter((tool) => used.has(tool.name));
  return project;
}

function assignedName(node: Node): string | undefined {
  const parent = node.parent;
  if (parent?.type !== "assignment") return undefined;
  const left = parent.childForFieldName("left");
  return left?.type === "identifier" ? left.text : undefined;
}

function agentOf(
  module: PythonModule,
  call: Node,
  toolVars: Map<string, string>,
): SourceAgent & { variable?: string } {
  const factory = calleeName(call);
  const legacy = factory === "initialize_agent";
  const variable = assignedName(call);
  const modelNode = argument(call, ["model", "llm"], legacy ? 1 : 0);
  const toolsNode = argument(call, ["tools"], legacy ? 0 : 1);
  const promptNode = argument(call, PROMPT_KEYWORDS, factory === "create_tool_calling_agent" ? 2 : undefined);
  const model = modelOf(module, modelNode);
  const name =
    stringValue(module, keywordArgs(call).get("name")) ?? variable ?? `agent-${call.startPosition.row + 1}`;
  return {
    name,
    variable,
    model: model.model,
    temperature: model.temperature,
    systemPrompt: promptOf(module, promptNode),
    tools: listItems(module, toolsNode).map((item) => toolName(module, item, toolVars)),
    source: lineOf(module, call),
  };
}

/** A tool in a `tools=[...]` list: our own tool's name, or the class a tool object was made from. */
function toolName(module: PythonModule, item: Node, toolVars: Map<string, string>): string {
  if (item.type === "identifier" && toolVars.has(item.text)) return toolVars.get(item.text) as string;
  const value = resolve(module, item);
  if (value?.type === "call") return calleeName(value) ?? value.text;
  return item.text;
}

function modelOf(module: PythonModule, node: Node | undefined): { model?: string; temperature?: number } {
  const value = resolve(module, node);
  if (!value) return {};
  if (value.type === "string") return { model: stringValue(module, value) };
  if (value.type !== "call" || !MODEL_CLASSES.test(calleeName(value) ?? "")) return {};
  const model = stringValue(
    module,
    argument(value, ["model", "model_name", "model_id", "deployment_name"], 0),
  );
  return { model, temperature: numberValue(module, argument(value, ["temperature"])) };
}

/** A prompt given as a string, a SystemMessage, or the system message of a ChatPromptTemplate. */
function promptOf(module: PythonModule, node: Node | undefined): string | undefined {
  const value = resolve(module, node);
  if (!value) return undefined;
  const text = stringValue(module, value);
  if (text !== undefined) return text;
  if (value.type !== "call") return undefined;
  const callee = calleeName(value);
  if (callee === "SystemMessage") return stringValue(module, argument(value, ["content"], 0));
  if (callee === "from_messages" || callee === "ChatPromptTemplate") {
    for (const message of listItems(module, argument(value, ["messages"], 0))) {
      const parts = message.type === "tuple" ? message.namedChildren : [];
      if (parts[0] && stringValue(module, parts[0]) === "system")
        return stringValue(module, parts[1] ?? undefined);
      if (message.type === "call" && calleeName(message) === "SystemMessage")
        return stringValue(module, argument(message, ["content"], 0));
    }
  }
  return undefined;
}

/**
 * A LangGraph StateGraph whose nodes are agents, in one line from START to END, as a sequential
 * workflow. A node running other code, or a branch, is reported as what keeps it from migrating.
 */
export function readStateGraphs(
  modules: PythonModule[],
  agentVars: Map<string, string>,
): { workflows: Array<SourceWorkflow & { variable?: string }>; skipped: Skipped[] } {
  const result: { workflows: Array<SourceWorkflow & { variable?: string }>; skipped: Skipped[] } = {
    workflows: [],
    skipped: [],
  };
  for (const module of modules) {
    for (const graph of calls(module, new Set(["StateGraph"]))) {
      const builder = assignedName(graph);
      if (!builder) continue;
      const methods = module.root
        .descendantsOfType("call")
        .filter((call) => calleeText(call).startsWith(`${builder}.`));
      const nodes = new Map<string, string | undefined>();
      const next = new Map<string, string>();
      let problem: string | undefined;
      for (const call of methods) {
        const method = calleeName(call);
        const args = positionalArgs(call);
        if (method === "add_node") {
          const first = args[0];
          const label = stringValue(module, first) ?? first?.text ?? "";
          const target = stringValue(module, first) === undefined ? first : args[1];
          nodes.set(label, nodeAgent(module, target, agentVars));
        } else if (method === "add_edge") {
          const [from, to] = args.map((arg) => stringValue(module, arg) ?? arg.text);
          if (from && to) next.set(from, to);
        } else if (method === "add_conditional_edges" || method === "add_sequence") {
          problem ??= `it branches (${method} at line ${call.startPosition.row + 1})`;
        } else if (method === "set_entry_point") {
          next.set("START", stringValue(module, args[0]) ?? "");
        }
      }
      const compiled = methods.find((call) => calleeName(call) === "compile");
      const variable = compiled ? assignedName(compiled) : undefined;
      const name = variable ?? builder;
      const steps: SourceWorkflow["steps"] = [];
      for (
        let at = next.get("START"), guard = 0;
        at && at !== "END" && guard < 50;
        at = next.get(at), guard++
      ) {
        const agent = nodes.get(at);
        if (!agent) {
          problem ??= `node ${at} runs Python code, not an agent`;
          break;
        }
        steps.push({ name: at, agent, task: `Carry out the ${at} step.` });
      }
      if (problem || steps.length === 0)
        result.skipped.push({
          type: "workflow",
          name,
          reason: problem ?? "no path from START",
          source: lineOf(module, graph),
        });
      else result.workflows.push({ name, variable, steps, source: lineOf(module, graph) });
    }
  }
  return result;
}

/** The agent a graph node runs: an agent variable, or a function whose body invokes one. */
function nodeAgent(
  module: PythonModule,
  target: Node | undefined,
  agentVars: Map<string, string>,
): string | undefined {
  if (!target) return undefined;
  if (agentVars.has(target.text)) return agentVars.get(target.text);
  const fn = module.root
    .descendantsOfType("function_definition")
    .find((def) => def.childForFieldName("name")?.text === target.text);
  for (const call of fn?.descendantsOfType("call") ?? []) {
    const object = call.childForFieldName("function")?.childForFieldName("object")?.text;
    if (object && agentVars.has(object)) return agentVars.get(object);
  }
  return undefined;
}
