import { existsSync } from "node:fs";
import { join } from "node:path";
import { parse } from "smol-toml";
import { channelVaultNamed } from "../../../channels/platforms.ts";
import { emptyProject, type FrameworkReader, MigrationInputError, type SourceProject } from "../model.ts";
import {
  dotEnv,
  envFileSecrets,
  isDirectory,
  listDirectory,
  readText,
  unreadChannelSecret,
} from "../project-files.ts";

/**
 * OpenFang's home (`~/.openfang`): `config.toml` (default model, channels), `agents/<name>/agent.toml`
 * manifests and `hands/<name>/HAND.toml`. Its own agent and hand files are TOML like ours; their fields
 * differ (`[model]` holds the prompt, `[capabilities].tools` the tools).
 */
type Table = Record<string, unknown>;
const table = (value: unknown): Table =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Table) : {};
const text = (value: unknown) => (typeof value === "string" && value.trim() ? value : undefined);
const number = (value: unknown) => (typeof value === "number" ? value : undefined);

function homeOf(dir: string): string | undefined {
  if (existsSync(join(dir, ".openfang"))) return join(dir, ".openfang");
  const looksLikeHome =
    existsSync(join(dir, "config.toml")) &&
    (existsSync(join(dir, "agents")) || existsSync(join(dir, "hands")));
  const hasManifests = manifests(dir, "agents", "agent.toml").some((file) =>
    /module\s*=\s*"builtin:/.test(readText(file)),
  );
  return looksLikeHome || hasManifests ? dir : undefined;
}

function manifests(dir: string, folder: string, name: string): string[] {
  return listDirectory(join(dir, folder))
    .map((entry) => join(dir, folder, entry, name))
    .filter((file) => existsSync(file));
}

export const openfang: FrameworkReader = {
  name: "openfang",
  detect(dir) {
    const home = homeOf(dir);
    return home ? { configPath: home, version: undefined } : undefined;
  },
  async read(configPath) {
    if (!isDirectory(configPath))
      throw new MigrationInputError(configPath, "must be OpenFang's home directory (~/.openfang)");
    const home = homeOf(configPath) ?? configPath;
    const project = emptyProject("openfang", home);
    const config = existsSync(join(home, "config.toml")) ? readToml(join(home, "config.toml")) : {};
    const defaultModel = text(table(config.default_model).model);
    for (const file of manifests(home, "agents", "agent.toml"))
      readAgent(project, readToml(file), file, defaultModel);
    for (const file of manifests(home, "hands", "HAND.toml"))
      readHand(project, readToml(file), file, defaultModel);
    const env = dotEnv(join(home, ".env"));
    readChannels(project, config, join(home, "config.toml"), env);
    // Keys the configuration names by env variable (api_key_env) and other secrets of .env.
    project.secrets.push(
      ...envFileSecrets(join(home, ".env")).filter(
        (secret) =>
          !secret.vaultName.startsWith("env:") || !channelEnvNames(config).has(secret.vaultName.slice(4)),
      ),
    );
    project.version = text(config.version);
    return project;
  },
};

function readToml(file: string): Table {
  try {
    return parse(readText(file)) as Table;
  } catch (error) {
    if (error instanceof MigrationInputError) throw error;
    const { line, message } = error as Error & { line?: number };
    throw new MigrationInputError(file, `is not valid TOML: ${message.split("\n")[0]}`, line);
  }
}

function readAgent(
  project: SourceProject,
  manifest: Table,
  file: string,
  defaultModel?: string,
): string | undefined {
  const name = text(manifest.name);
  if (!name) {
    project.skipped.push({ type: "agent", name: file, reason: "the manifest has no name", source: file });
    return undefined;
  }
  const model = table(manifest.model);
  const chosen = text(model.model);
  project.agents.push({
    name,
    description: text(manifest.description),
    model: chosen && chosen !== "default" ? chosen : defaultModel,
    systemPrompt: text(model.system_prompt) ?? text(manifest.system_prompt),
    temperature: number(model.temperature) ?? number(manifest.temperature),
    maxTokens: number(model.max_tokens) ?? number(manifest.max_tokens),
    tools:
      (table(manifest.capabilities).tools as string[] | undefined) ??
      (manifest.tools as string[] | undefined) ??
      [],
    source: file,
  });
  const schedule = manifest.schedule;
  const cron =
    typeof schedule === "string"
      ? schedule
      : (text(table(schedule).cron) ?? text(table(table(schedule).periodic).cron));
  if (cron)
    project.schedules.push({ name, agent: name, cron, task: text(table(schedule).task), source: file });
  return name;
}

/** A hand: its `[agent]` becomes an agent with the hand's tools; a schedule, if it has one, a hand. */
function readHand(project: SourceProject, hand: Table, file: string, defaultModel?: string): void {
  const agent = table(hand.agent);
  const name = readAgent(
    project,
    {
      ...agent,
      name: text(agent.name) ?? text(hand.id),
      description: text(agent.description) ?? text(hand.description),
      model: {
        model: agent.model,
        system_prompt: agent.system_prompt,
        temperature: agent.temperature,
        max_tokens: agent.max_tokens,
      },
      tools: hand.tools,
      schedule: hand.schedule,
    },
    file,
    defaultModel,
  );
  if (name && !hand.schedule)
    project.skipped.push({
      type: "cron",
      name: text(hand.id) ?? name,
      reason:
        "the hand has no schedule (OpenFang activates hands by hand): give it one in hands/<name>/HAND.toml",
      source: file,
    });
}

/** `[channels.<platform>]`: OpenFang names env variables for tokens (their values are not in the file). */
function channelEnvNames(config: Table): Set<string> {
  return new Set(
    Object.values(table(config.channels)).flatMap((settings) =>
      Object.entries(table(settings))
        .filter(([key, value]) => key.endsWith("_env") && typeof value === "string")
        .map(([, value]) => value as string),
    ),
  );
}

function readChannels(
  project: SourceProject,
  config: Table,
  file: string,
  env: ReturnType<typeof dotEnv>,
): void {
  for (const [platform, raw] of Object.entries(table(config.channels))) {
    const settings = table(raw);
    const agent = text(settings.default_agent);
    const chats = [
      settings.channel_id,
      settings.chat_id,
      ...((settings.allowed_chats as unknown[]) ?? []),
    ].filter((id): id is string | number => typeof id === "string" || typeof id === "number");
    for (const chat of chats)
      if (agent)
        project.channels.push({
          platform,
          channelId: String(chat),
          agent,
          source: `${file} (channels.${platform})`,
        });
    if (chats.length === 0)
      project.skipped.push({
        type: "channel",
        name: platform,
        reason:
          "names no chat to bind: bind chats with agentos channels bind (unbound chats reach the default agent)",
        source: `${file} (channels.${platform})`,
      });
    for (const [key, value] of Object.entries(settings)) {
      if (!key.endsWith("_env") || typeof value !== "string") continue;
      const vaultName = channelVaultNamed(platform, key.replace(/_env$/, ""));
      if (!vaultName) {
        project.skipped.push({
          type: "secret",
          name: value,
          reason: unreadChannelSecret(platform),
          source: `${file} (channels.${platform}.${key})`,
        });
        continue;
      }
      const found = env.get(value);
      if (found)
        project.secrets.push({ vaultName, value: found.value, source: `.env:${found.line} (${value})` });
      else
        project.skipped.push({
          type: "secret",
          name: value,
          reason: `read from the environment by OpenFang: store it with agentos config set-secret ${vaultName} <value>`,
          source: `${file} (channels.${platform}.${key})`,
        });
    }
  }
}
