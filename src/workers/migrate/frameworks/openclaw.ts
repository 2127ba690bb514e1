import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import JSON5 from "json5";
import type { VaultNames } from "../../../channels/platform.ts";
import { CHANNEL_VAULT_NAMES } from "../../../channels/platforms.ts";
import { emptyProject, type FrameworkReader, MigrationInputError, type SourceProject } from "../model.ts";
import {
  isDirectory,
  listDirectory,
  readText,
  unreadChannelSecret,
  vaultNameForEnv,
} from "../project-files.ts";
import { everyToCron } from "../schedules.ts";

/** Where OpenClaw (and its earlier names) keeps its configuration, relative to a home directory. */
const CONFIG_FILES = [
  ".openclaw/openclaw.json",
  ".openclaw/config.json5",
  ".clawdbot/config.json",
  ".clawdbot/clawdbot.json",
  ".moldbot/config.json",
  ".moltbot/config.json",
  "openclaw.json",
];

/** OpenClaw's tool profiles, as its built-in tool names. */
const PROFILES: Record<string, string[]> = {
  minimal: [],
  coding: ["read", "write", "edit", "apply_patch", "exec", "memory"],
  messaging: ["message"],
  full: ["read", "write", "edit", "exec", "web_search", "web_fetch", "browser", "cron", "message", "memory"],
};

/**
 * OpenClaw's secret fields by what they are to our adapter (its vault names are the adapter's own);
 * null: a secret of a connection mode AgentOS does not use, reported as skipped rather than stored.
 */
const CHANNEL_SECRETS: Record<string, Record<string, keyof VaultNames | null>> = {
  telegram: { botToken: "token", webhookSecret: "secret" },
  slack: { botToken: "token", signingSecret: "secret", appToken: null },
  discord: { token: null, publicKey: "secret" },
  whatsapp: { accessToken: "token", appSecret: "secret", verifyToken: "verifyToken" },
  msteams: { appPassword: null },
  line: { channelAccessToken: "token", channelSecret: "secret" },
};
const PLATFORM_NAMES: Record<string, string> = { msteams: "teams" };

interface OpenClawAgent {
  id?: string;
  name?: string;
  model?: string | { primary?: string };
  workspace?: string;
  identity?: { name?: string; theme?: string };
  tools?: { profile?: string; allow?: string[]; deny?: string[] };
}

type Json = Record<string, unknown>;
const object = (value: unknown): Json =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Json) : {};

export const openclaw: FrameworkReader = {
  name: "openclaw",
  detect(dir) {
    for (const candidate of CONFIG_FILES) {
      const file = join(dir, candidate);
      if (existsSync(file)) return { configPath: file, version: versionOf(file) };
    }
    return undefined;
  },
  async read(configPath) {
    const file = isDirectory(configPath)
      ? (this.detect(configPath)?.configPath ?? join(configPath, "openclaw.json"))
      : configPath;
    const config = parseJson5(file);
    const project = emptyProject("openclaw", file);
    project.version = versionOf(file);
    const root = dirname(file);
    readAgents(project, config, root);
    readChannels(project, config, file);
    readEnv(project, config, file);
    readCronJobs(project, root);
    readSessions(project, root);
    return project;
  },
};

function parseJson5(file: string): Json {
  try {
    return object(JSON5.parse(readText(file)));
  } catch (error) {
    if (error instanceof MigrationInputError) throw error;
    const { lineNumber, message } = error as Error & { lineNumber?: number };
    throw new MigrationInputError(file, `is not valid JSON5: ${message.replace(/^JSON5: /, "")}`, lineNumber);
  }
}

function versionOf(file: string): string | undefined {
  try {
    const meta = object(object(JSON5.parse(readText(file))).meta);
    return typeof meta.lastTouchedVersion === "string" ? meta.lastTouchedVersion : undefined;
  } catch {
    return undefined;
  }
}

function modelName(model: OpenClawAgent["model"]): string | undefined {
  return typeof model === "string" ? model : model?.primary;
}

function readAgents(project: SourceProject, config: Json, root: string): void {
  const agents = object(config.agents);
  const defaults = object(agents.defaults) as OpenClawAgent;
  const list = (Array.isArray(agents.list) ? agents.list : [{ id: "main" }]) as OpenClawAgent[];
  const globalTools = object(config.tools) as OpenClawAgent["tools"];
  list.forEach((agent, index) => {
    const id = agent.id ?? `agent-${index + 1}`;
    const tools = object(agent.tools) as NonNullable<OpenClawAgent["tools"]>;
    const profile = tools.profile ?? globalTools?.profile ?? "full";
    const deny = new Set([...(globalTools?.deny ?? []), ...(tools.deny ?? [])]);
    const allowed = [
      ...(PROFILES[profile] ?? []),
      ...(globalTools?.allow ?? []),
      ...(tools.allow ?? []),
    ].filter((tool) => !tool.startsWith("group:") && !deny.has(tool));
    project.agents.push({
      name: id,
      description: agent.identity?.theme ?? agent.name,
      model: modelName(agent.model) ?? modelName(defaults.model),
      systemPrompt: workspacePrompt(agent.workspace ?? defaults.workspace, root, id, index === 0),
      tools: [...new Set(allowed)],
      source: `${project.configPath} (agents.list[${index}])`,
    });
  });
}

/** OpenClaw keeps an agent's persona in its workspace (SOUL.md, IDENTITY.md, AGENTS.md): the prompt. */
function workspacePrompt(
  workspace: string | undefined,
  root: string,
  id: string,
  isDefault: boolean,
): string | undefined {
  const candidates = [
    workspace &&
      (workspace.startsWith("~/")
        ? join(homedir(), workspace.slice(2))
        : isAbsolute(workspace)
          ? workspace
          : resolve(root, workspace)),
    join(root, `workspace-${id}`),
    isDefault ? join(root, "workspace") : undefined,
  ].filter((dir): dir is string => Boolean(dir) && isDirectory(dir as string));
  const dir = candidates[0];
  if (!dir) return undefined;
  const parts = ["SOUL.md", "IDENTITY.md", "AGENTS.md"]
    .map((name) => join(dir, name))
    .filter((path) => existsSync(path))
    .map((path) => readText(path).trim());
  return parts.length ? parts.join("\n\n").slice(0, 32_000) : undefined;
}

function readChannels(project: SourceProject, config: Json, file: string): void {
  const channels = object(config.channels);
  for (const [platformKey, settings] of Object.entries(channels)) {
    const platform = PLATFORM_NAMES[platformKey] ?? platformKey;
    const fields = CHANNEL_SECRETS[platformKey] ?? {};
    const accounts = { default: object(settings), ...object(object(settings).accounts) };
    for (const account of Object.values(accounts)) {
      for (const [field, role] of Object.entries(fields)) {
        const value = object(account)[field];
        if (typeof value !== "string" || !value) continue;
        const source = `${file} (channels.${platformKey}.${field})`;
        const vaultName = role ? CHANNEL_VAULT_NAMES.get(platform)?.[role] : undefined;
        if (vaultName) project.secrets.push({ vaultName, value, source });
        else
          project.skipped.push({
            type: "secret",
            name: `channels.${platformKey}.${field}`,
            reason: unreadChannelSecret(platform),
            source,
          });
      }
    }
  }
  const bindings = Array.isArray(config.bindings) ? config.bindings : [];
  bindings.forEach((raw, index) => {
    const binding = object(raw);
    const match = object(binding.match);
    const platformKey = String(match.channel ?? "");
    const platform = PLATFORM_NAMES[platformKey] ?? platformKey;
    const peer = object(match.peer);
    const agent = String(binding.agentId ?? "");
    const source = `${file} (bindings[${index}])`;
    if (typeof peer.id === "string" && peer.id)
      project.channels.push({ platform, channelId: peer.id, agent, source });
    else
      project.skipped.push({
        type: "channel",
        name: `${platform}:${agent}`,
        reason:
          "binds a whole account, not one chat: bind each chat with agentos channels bind (unbound chats reach the default agent)",
        source,
      });
  });
}

function readEnv(project: SourceProject, config: Json, file: string): void {
  const env = object(config.env);
  const entries = { ...env, ...object(env.vars) };
  for (const [name, value] of Object.entries(entries)) {
    const vaultName = vaultNameForEnv(name);
    if (vaultName && typeof value === "string" && value)
      project.secrets.push({ vaultName, value, source: `${file} (env.${name})` });
  }
}

/** `cron/jobs.json` beside the configuration: recurring agent turns become hands. */
function readCronJobs(project: SourceProject, root: string): void {
  const file = join(root, "cron", "jobs.json");
  if (!existsSync(file)) return;
  const jobs = object(parseJson5(file)).jobs;
  for (const [index, raw] of (Array.isArray(jobs) ? jobs : []).entries()) {
    const job = object(raw);
    const name = String(job.name ?? job.id ?? `job-${index + 1}`);
    const schedule = object(job.schedule);
    const payload = object(job.payload);
    const source = `${file} (jobs[${index}])`;
    const cron =
      schedule.kind === "cron" && typeof schedule.expr === "string"
        ? schedule.expr
        : schedule.kind === "every" && typeof schedule.everyMs === "number"
          ? everyToCron(schedule.everyMs)
          : undefined;
    if (job.enabled === false) {
      project.skipped.push({ type: "cron", name, reason: "disabled in OpenClaw", source });
      continue;
    }
    if (!cron) {
      project.skipped.push({
        type: "cron",
        name,
        reason: `a ${String(schedule.kind)} schedule has no cron equivalent`,
        source,
      });
      continue;
    }
    const task =
      typeof payload.message === "string"
        ? payload.message
        : typeof payload.text === "string"
          ? payload.text
          : undefined;
    project.schedules.push({ name, agent: String(job.agentId ?? "main"), cron, task, source });
  }
}

/** `agents/<id>/sessions/*.jsonl`: each line an event; the messages are kept as history. */
function readSessions(project: SourceProject, root: string): void {
  const agentsDir = join(root, "agents");
  for (const agent of listDirectory(agentsDir)) {
    const dir = join(agentsDir, agent, "sessions");
    for (const entry of listDirectory(dir)
      .filter((name) => name.endsWith(".jsonl"))
      .slice(0, 200)) {
      const file = join(dir, entry);
      const messages: Array<{ role: string; content: string }> = [];
      for (const line of readText(file).split("\n")) {
        try {
          const event = object(JSON.parse(line));
          const message = object(event.message ?? event);
          const content = Array.isArray(message.content)
            ? message.content.map((part) => String(object(part).text ?? "")).join("")
            : message.content;
          if (
            (message.role === "user" || message.role === "assistant") &&
            typeof content === "string" &&
            content
          )
            messages.push({ role: message.role, content });
        } catch {
          // A line that is not JSON (a partial write) is not a message.
        }
      }
      if (messages.length)
        project.sessions.push({ agent, id: basename(entry, ".jsonl"), messages, source: file });
    }
  }
}
