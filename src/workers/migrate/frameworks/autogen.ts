import { existsSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { emptyProject, type FrameworkReader, MigrationInputError, type SourceProject } from "../model.ts";
import {
  isDirectory,
  listDirectory,
  pythonPackageVersion,
  readJsonFile,
  readText,
} from "../project-files.ts";

/**
 * AutoGen AgentChat's declarative components (`dump_component()` JSON): a team of agents or one
 * agent, each `{provider, component_type, config}`. Round-robin teams become sequential workflows;
 * selector and swarm teams a manager agent that delegates; MCP workbenches integrations.
 */
interface Component {
  provider?: string;
  component_type?: string;
  label?: string;
  description?: string;
  config?: Record<string, unknown>;
}

const PROVIDER_VENDORS: Array<[RegExp, string]> = [
  [/AzureOpenAI/, "azure"],
  [/OpenAI/, "openai"],
  [/Anthropic/, "anthropic"],
  [/Gemini|Google/, "google"],
  [/Ollama/, "ollama"],
];

const isAutogen = (value: unknown): value is Component =>
  typeof value === "object" &&
  value !== null &&
  String((value as Component).provider ?? "").startsWith("autogen");

export const autogen: FrameworkReader = {
  name: "autogen",
  detect(dir) {
    const files = componentFiles(dir);
    const config =
      files[0] ?? (existsSync(join(dir, "OAI_CONFIG_LIST")) ? join(dir, "OAI_CONFIG_LIST") : undefined);
    if (!config) return undefined;
    return { configPath: files.length > 1 ? dir : config, version: version(dir) };
  },
  async read(configPath) {
    const dir = isDirectory(configPath) ? configPath : join(configPath, "..");
    const files = isDirectory(configPath) ? componentFiles(configPath) : [configPath];
    const project = emptyProject("autogen", configPath);
    project.version = version(dir);
    for (const file of files) {
      if (file.endsWith("OAI_CONFIG_LIST")) continue;
      const component = readJsonFile(file);
      if (!isAutogen(component))
        throw new MigrationInputError(file, "is not an AutoGen component (no autogen provider)");
      readComponent(project, component, file);
    }
    const list = join(dir, "OAI_CONFIG_LIST");
    if (existsSync(list)) readConfigList(project, list);
    return project;
  },
};

function version(dir: string): string | undefined {
  return (
    pythonPackageVersion(dir, "autogen-agentchat") ??
    pythonPackageVersion(dir, "pyautogen") ??
    pythonPackageVersion(dir, "ag2")
  );
}

function componentFiles(dir: string): string[] {
  return listDirectory(dir)
    .filter((entry) => entry.endsWith(".json"))
    .slice(0, 100)
    .map((entry) => join(dir, entry))
    .filter((file) => {
      try {
        return isAutogen(JSON.parse(readText(file)));
      } catch {
        return false;
      }
    });
}

function readComponent(project: SourceProject, component: Component, file: string): void {
  if (component.component_type === "agent") {
    readAgent(project, component, file);
    return;
  }
  if (component.component_type !== "team") {
    project.skipped.push({
      type: "agent",
      name: component.label ?? String(component.provider),
      reason: `a ${component.component_type} component on its own`,
      source: file,
    });
    return;
  }
  const config = component.config ?? {};
  const participants = (Array.isArray(config.participants) ? config.participants : []) as Component[];
  const members = participants
    .map((participant) => readAgent(project, participant, file))
    .filter((name): name is string => Boolean(name));
  const kind = String(component.provider).split(".").at(-1) ?? "team";
  const teamName = String(
    config.name ?? (component.label && component.label !== kind ? component.label : basename(file, ".json")),
  );
  if (members.length === 0) {
    project.skipped.push({
      type: "workflow",
      name: teamName,
      reason: "no assistant agents in the team",
      source: file,
    });
    return;
  }
  const task = component.description ?? "Work on the task together.";
  if (kind === "RoundRobinGroupChat") {
    project.workflows.push({
      name: teamName,
      description: `AutoGen ${kind}: each agent in turn`,
      steps: members.map((member) => ({
        name: member,
        agent: member,
        task: `${task}\nAdd your part as ${member}.`,
      })),
      source: file,
    });
    return;
  }
  // Selector and swarm teams choose the next speaker by model: a manager agent that delegates.
  const manager = `${teamName}-selector`;
  const model = modelOf(project, config.model_client as Component | undefined, file);
  const selectorPrompt = typeof config.selector_prompt === "string" ? config.selector_prompt : "";
  project.agents.push({
    name: manager,
    description: `Chooses who speaks next in ${teamName} (AutoGen ${kind})`,
    model,
    systemPrompt: `You coordinate a team of agents (${members.join(", ")}). For each part of the task, choose the agent best suited and delegate to it with tool::agent_delegate (find them with tool::agent_list), until the task is done; then answer.${selectorPrompt ? `\n\nThe team's selection rule:\n${selectorPrompt}` : ""}`,
    tools: ["agent_list", "agent_delegate"],
    source: file,
  });
  project.workflows.push({
    name: teamName,
    description: `AutoGen ${kind}`,
    steps: [{ name: "coordinate", agent: manager, task }],
    source: file,
  });
}

/** An AssistantAgent (its model, prompt, tools and MCP workbenches); other agents are reported. */
function readAgent(project: SourceProject, component: Component, file: string): string | undefined {
  const config = component.config ?? {};
  const name = String(config.name ?? component.label ?? "agent");
  const kind = String(component.provider).split(".").at(-1);
  if (kind !== "AssistantAgent") {
    const reason =
      kind === "UserProxyAgent"
        ? "a human in the loop: people talk to the agents over the API or a channel"
        : `${kind} has no equivalent`;
    project.skipped.push({ type: "agent", name, reason, source: file });
    return undefined;
  }
  const tools: string[] = [];
  const toolComponents = [
    ...((Array.isArray(config.tools) ? config.tools : []) as Component[]),
    ...(Array.isArray(config.workbench)
      ? config.workbench
      : config.workbench
        ? [config.workbench]
        : []
    ).flatMap((bench) => {
      const workbench = bench as Component;
      if (String(workbench.provider).endsWith("McpWorkbench")) {
        tools.push(mcpIntegration(project, workbench, name, file));
        return [];
      }
      return (workbench.config?.tools ?? []) as Component[];
    }),
  ];
  for (const tool of toolComponents) {
    const toolName = String(tool.config?.name ?? tool.label ?? "tool");
    tools.push(toolName);
    if (!project.tools.some((known) => known.name === toolName))
      project.tools.push({
        name: toolName,
        description: typeof tool.config?.description === "string" ? tool.config.description : undefined,
        source: file,
      });
  }
  const modelConfig = (config.model_client as Component | undefined)?.config ?? {};
  project.agents.push({
    name,
    description: typeof config.description === "string" ? config.description : undefined,
    model: modelOf(project, config.model_client as Component | undefined, file),
    systemPrompt: typeof config.system_message === "string" ? config.system_message : undefined,
    temperature: typeof modelConfig.temperature === "number" ? modelConfig.temperature : undefined,
    maxTokens: typeof modelConfig.max_tokens === "number" ? modelConfig.max_tokens : undefined,
    tools,
    source: file,
  });
  return name;
}

/** The model a model client names; its api_key goes to the vault as the provider's key. */
function modelOf(project: SourceProject, client: Component | undefined, file: string): string | undefined {
  const config = client?.config ?? {};
  const apiKey = config.api_key;
  if (typeof apiKey === "string" && apiKey) {
    const vendor =
      PROVIDER_VENDORS.find(([pattern]) => pattern.test(String(client?.provider)))?.[1] ?? "openai";
    if (!project.secrets.some((secret) => secret.vaultName === `provider:${vendor}:api_key`))
      project.secrets.push({
        vaultName: `provider:${vendor}:api_key`,
        value: apiKey,
        source: `${file} (model_client.config.api_key)`,
      });
  }
  return typeof config.model === "string" ? config.model : undefined;
}

/** An McpWorkbench as an integration of its own; the agent gets the integration's tools. */
function mcpIntegration(project: SourceProject, workbench: Component, agent: string, file: string): string {
  const params = (workbench.config?.server_params ?? {}) as Record<string, unknown>;
  const command = typeof params.command === "string" ? params.command : undefined;
  const name = String(
    workbench.label && workbench.label !== "McpWorkbench" ? workbench.label : `${command ?? "mcp"}-${agent}`,
  );
  project.tools.push({
    name,
    description: workbench.description,
    source: file,
    mcp: {
      command,
      args: Array.isArray(params.args) ? params.args.map(String) : [],
      // Relative paths in the command resolve where the project lives, as they did for AutoGen.
      cwd: typeof params.cwd === "string" ? params.cwd : dirname(file),
      env: (params.env ?? {}) as Record<string, string>,
      url: typeof params.url === "string" ? params.url : undefined,
    },
  });
  return name;
}

/** AutoGen 0.2's OAI_CONFIG_LIST: model entries with their keys. */
function readConfigList(project: SourceProject, file: string): void {
  const list = readJsonFile(file);
  for (const [index, entry] of (Array.isArray(list) ? list : []).entries()) {
    const { api_key: apiKey, api_type: apiType } = entry as { api_key?: string; api_type?: string };
    const vendor =
      apiType === "anthropic"
        ? "anthropic"
        : apiType === "google"
          ? "google"
          : apiType === "azure"
            ? "azure"
            : "openai";
    if (
      typeof apiKey === "string" &&
      apiKey &&
      !project.secrets.some((secret) => secret.vaultName === `provider:${vendor}:api_key`)
    )
      project.secrets.push({
        vaultName: `provider:${vendor}:api_key`,
        value: apiKey,
        source: `${file} ([${index}].api_key)`,
      });
  }
}
