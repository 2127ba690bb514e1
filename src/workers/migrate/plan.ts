import { stringify as toToml } from "smol-toml";
import { stringify as toYaml } from "yaml";
import { DEFAULT_REALM_ID } from "../../shared/access.ts";
import { agentChatSteps } from "../../shared/agent-steps.ts";
import type { ItemType, Skipped, SourceAgent, SourceProject, SourceSecret, SourceTool } from "./model.ts";
import { mapModel } from "./models.ts";
import { toTomlText } from "./toml-text.ts";
import { mapTool, snakeCase } from "./tools.ts";

/** One file the migration writes, relative to the service's home. */
export interface PlannedFile {
  path: string;
  content: string;
  type: ItemType;
  name: string;
  source?: string;
}

export interface Flag {
  type: ItemType;
  name: string;
  message: string;
}

export interface Plan {
  files: PlannedFile[];
  /** Values go to the vault, never into a file. */
  secrets: SourceSecret[];
  skipped: Skipped[];
  /** Migrated with a caveat (an unknown model, a tool to provide). */
  flags: Flag[];
}

export interface PlanContext {
  /** Catalog model ids. */
  models: ReadonlySet<string>;
  /** Functions registered now (our tools). */
  functions: ReadonlySet<string>;
}

/** A name usable as a directory, file and step name: `Senior Researcher` → `senior-researcher`. */
export function slug(name: string): string {
  const text = name
    .normalize("NFKD")
    .replace(/[^\w\s.-]/g, "")
    .trim()
    .replace(/[\s.]+/g, "-")
    .replace(/-+/g, "-")
    .replace(/^-|-$/g, "")
    .toLowerCase()
    .slice(0, 64);
  return text || "unnamed";
}

/** An integration's name: the tool's name in snake case (`CurrencyTool` → `currency_tool`). */
const integrationName = (tool: string) => slug(snakeCase(tool));

function header(project: SourceProject, source: string | undefined): string {
  return `# Migrated from ${project.framework} (${source ?? project.configPath}) by agentos migrate.\n`;
}

/**
 * The intermediate model as our configuration: one file per agent, channel, schedule, integration and
 * workflow, under the paths the service reads back. Pure: the same project gives the same plan.
 */
export function planMigration(project: SourceProject, context: PlanContext): Plan {
  const plan: Plan = { files: [], secrets: [...project.secrets], skipped: [...project.skipped], flags: [] };
  const agentNames = new Map<string, string>();
  const accepted: Array<[SourceAgent, string]> = [];
  for (const agent of project.agents) {
    const name = slug(agent.name);
    if ([...agentNames.values()].includes(name)) {
      plan.skipped.push({
        type: "agent",
        name: agent.name,
        reason: `a second agent named ${name}`,
        source: agent.source,
      });
      continue;
    }
    agentNames.set(agent.name, name);
    accepted.push([agent, name]);
  }
  const integrations = new Map<string, SourceTool>();
  // A tool we have already (a search, a file tool) needs no integration; MCP servers always get one.
  for (const tool of project.tools)
    if (tool.mcp || !mapTool(tool.name, context.functions))
      integrations.set(integrationName(tool.name), tool);
  for (const [agent, name] of accepted)
    plan.files.push(agentFile(project, agent, name, context, plan, integrations));
  for (const [name, tool] of integrations) {
    plan.files.push({
      path: `integrations/${name}.toml`,
      content: header(project, tool.source) + toToml(integrationToml(name, tool, plan)),
      type: "tool",
      name,
      source: tool.source,
    });
    if (!tool.mcp)
      plan.flags.push({
        type: "tool",
        name,
        message: `integrations/${name}.toml is pending: give it an [mcp] server or [[http]] tools to make ${name} callable`,
      });
    else
      plan.flags.push({
        type: "tool",
        name,
        message: `integrations/${name}.toml is disabled until reviewed: it would ${mcpAction(tool.mcp)}; check that, then set enabled = true and reload`,
      });
  }
  for (const channel of project.channels) {
    const agent = agentNames.get(channel.agent);
    if (!agent) {
      plan.skipped.push({
        type: "channel",
        name: `${channel.platform}:${channel.channelId}`,
        reason: `no agent ${channel.agent}`,
        source: channel.source,
      });
      continue;
    }
    const secrets = Object.fromEntries(
      plan.secrets
        .filter((secret) => secret.vaultName.startsWith(`channel:${channel.platform}:`))
        .map((secret) => [secret.vaultName.split(":").at(-1) as string, secret.vaultName]),
    );
    const name = slug(`${channel.platform}-${channel.channelId}`);
    plan.files.push({
      path: `config/channels/${name}.toml`,
      content:
        header(project, channel.source) +
        toToml({
          platform: channel.platform,
          channel_id: channel.channelId,
          agent,
          ...(Object.keys(secrets).length ? { secrets } : {}),
        }),
      type: "channel",
      name: `${channel.platform}:${channel.channelId}`,
      source: channel.source,
    });
  }
  for (const schedule of project.schedules) {
    const agent = agentNames.get(schedule.agent);
    if (!agent) {
      plan.skipped.push({
        type: "cron",
        name: schedule.name,
        reason: `no agent ${schedule.agent}`,
        source: schedule.source,
      });
      continue;
    }
    const name = slug(schedule.name);
    plan.files.push({
      path: `hands/${name}/HAND.toml`,
      content:
        header(project, schedule.source) +
        toTomlText({
          name,
          agent,
          schedule: pulseCron(schedule.cron, schedule.task),
          ...(schedule.task ? { task: schedule.task } : {}),
        }),
      type: "cron",
      name,
      source: schedule.source,
    });
  }
  for (const workflow of project.workflows) {
    const missing = workflow.steps.find((step) => !agentNames.has(step.agent));
    if (missing || workflow.steps.length === 0) {
      const reason = missing ? `step ${missing.name} names no migrated agent (${missing.agent})` : "no steps";
      plan.skipped.push({ type: "workflow", name: workflow.name, reason, source: workflow.source });
      continue;
    }
    const name = slug(workflow.name);
    plan.files.push({
      path: `workflows/${name}.yaml`,
      content: header(project, workflow.source) + toYaml(workflowYaml(name, workflow)),
      type: "workflow",
      name,
      source: workflow.source,
    });
  }
  for (const session of project.sessions) {
    const agent = agentNames.get(session.agent);
    if (!agent) continue;
    const name = `${agent}-${slug(session.id)}`;
    plan.files.push({
      path: `data/sessions/${name}.json`,
      content: `${JSON.stringify({ agent, framework: project.framework, sessionId: session.id, source: session.source, messages: session.messages }, null, 2)}\n`,
      type: "session",
      name,
      source: session.source,
    });
  }
  return plan;
}

function agentFile(
  project: SourceProject,
  agent: SourceAgent,
  name: string,
  context: PlanContext,
  plan: Plan,
  integrations: Map<string, SourceTool>,
): PlannedFile {
  const tools = new Set<string>();
  for (const tool of agent.tools) {
    const mapped = mapTool(tool, context.functions);
    if (mapped) {
      for (const id of mapped) tools.add(id);
      continue;
    }
    const integration = integrationName(tool);
    if (!integrations.has(integration)) integrations.set(integration, { name: tool, source: agent.source });
    tools.add(`mcp::${integration}::*`);
    // A pending integration may be given either kind of tools; an MCP server's are MCP tools.
    if (!integrations.get(integration)?.mcp) tools.add(`http::${integration}::*`);
  }
  let model: string | undefined;
  let note = "";
  if (agent.model) {
    model = mapModel(agent.model, context.models);
    if (!model) {
      note = `# The source's model ${agent.model} is not in the catalog: the realm's default model is used.\n`;
      plan.flags.push({
        type: "agent",
        name,
        message: `model ${agent.model} is not in the catalog; the agent uses the realm's default model`,
      });
    }
  }
  const fields = {
    name,
    ...(agent.description ? { description: agent.description } : {}),
    ...(model ? { model } : {}),
    ...(agent.systemPrompt ? { system_prompt: agent.systemPrompt } : {}),
    tools: [...tools].sort(),
    ...(agent.temperature === undefined ? {} : { temperature: agent.temperature }),
    ...(agent.maxTokens === undefined ? {} : { max_tokens: agent.maxTokens }),
  };
  return {
    path: `agents/${name}/agent.toml`,
    content: header(project, agent.source) + note + toTomlText(fields),
    type: "agent",
    name,
    source: agent.source,
  };
}

/** A hand without a task is the agent's pulse, whose cron has six fields: a five-field one fires at second 0. */
function pulseCron(cron: string, task: string | undefined): string {
  return !task && cron.trim().split(/\s+/).length === 5 ? `0 ${cron.trim()}` : cron;
}

const SECRET_ENV = /(KEY|TOKEN|SECRET|PASSWORD|PASS|CREDENTIAL)/i;

/** What starting a migrated MCP server would do, as the review flag says it. */
function mcpAction(mcp: NonNullable<SourceTool["mcp"]>): string {
  if (mcp.url) return `connect to ${mcp.url}`;
  return `run \`${[mcp.command, ...(mcp.args ?? [])].join(" ").slice(0, 500)}\` as the service`;
}

/**
 * A migrated tool's integration, open to realm-default (where migrations put their agents) only. Its
 * MCP server is written disabled: the command or URL comes from the imported project, and a project is
 * not trusted to run commands or reach addresses on the service's host before someone has read them.
 */
function integrationToml(name: string, tool: SourceTool, plan: Plan): Record<string, unknown> {
  const base = {
    name,
    ...(tool.description ? { description: tool.description } : {}),
    realms: [DEFAULT_REALM_ID],
    source: tool.source,
  };
  if (!tool.mcp) return base;
  const env: Record<string, string> = {};
  const secrets: Record<string, string> = {};
  for (const [key, value] of Object.entries(tool.mcp.env ?? {})) {
    if (!SECRET_ENV.test(key)) {
      env[key] = value;
      continue;
    }
    const vaultName = `mcp:${name}:${key.toLowerCase()}`;
    plan.secrets.push({ vaultName, value, source: tool.source });
    secrets[key] = vaultName;
  }
  const mcp = tool.mcp.url
    ? { url: tool.mcp.url }
    : {
        command: tool.mcp.command,
        args: tool.mcp.args ?? [],
        ...(tool.mcp.cwd ? { cwd: tool.mcp.cwd } : {}),
        ...(Object.keys(env).length ? { env } : {}),
      };
  return {
    ...base,
    enabled: false,
    mcp: { ...mcp, ...(Object.keys(secrets).length ? { secrets } : {}) },
  };
}

function workflowYaml(name: string, workflow: SourceProject["workflows"][number]) {
  const steps = workflow.steps.map((step) => ({ ...step, name: slug(step.name) }));
  return {
    id: name,
    name: workflow.name,
    ...(workflow.description ? { description: workflow.description } : {}),
    steps: agentChatSteps(steps, (step) => ({ agent: slug(step.agent) })),
  };
}
