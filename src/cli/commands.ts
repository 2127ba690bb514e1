import { resolve } from "node:path";
import type { AgentOS } from "../app.ts";
import { loadConfig } from "../config/env.ts";
import { call, type FunctionId, type InputOf } from "../engine/call.ts";
import type { TriggerFn } from "../engine/types.ts";
import { readDeclared } from "../workers/config/files.ts";
import { readIntegrations } from "../workers/integrations/files.ts";
import { checkWorkflowFiles } from "../workers/workflow/check-file.ts";
import { output, table } from "./api.ts";
import { secretArgument } from "./secret-input.ts";
import { callService, keyFor, serviceAddress, unreachable } from "./service-call.ts";

/**
 * Runs one command against the configured storage, with the same functions the server uses. Without
 * background work: a server may be running on the same data dir, and its pulses, their leases and its
 * workflow runs are its own (a command must not schedule, recover or resume any of them).
 */
async function withService<T>(work: (service: AgentOS) => Promise<T>): Promise<T> {
  const { createAgentOS } = await import("../app.ts");
  const service = await createAgentOS(loadConfig(), { bootstrapAdminKey: false, background: false });
  try {
    return await work(service);
  } finally {
    await service.close();
  }
}

/** Levenshtein distance, for "did you mean" (provider ids are short). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/** The service's functions, called with its own rights (the CLI runs where the data is). */
const triggerOf =
  (service: AgentOS): TriggerFn =>
  (request) =>
    service.engine.trigger(request);

function print(value: unknown): void {
  process.stdout.write(`${typeof value === "string" ? value : JSON.stringify(value, null, 2)}\n`);
}

export async function configSetKey(provider: string, given?: string): Promise<void> {
  const id = provider.toLowerCase();
  const key = await secretArgument(given, `${provider} API key`);
  await withService(async (service) => {
    // A misspelt provider would store a key nothing ever reads: the catalog must know it.
    const { providers } = await call(triggerOf(service), "catalog::providers", {});
    const ids = providers.map((entry) => entry.id);
    if (!ids.includes(id)) {
      const near = ids.filter((known) => editDistance(known, id) <= 2);
      throw new Error(
        `Unknown provider "${provider}"${near.length ? ` (did you mean ${near.join(" or ")}?)` : ""}; the providers are: ${ids.join(", ")}`,
      );
    }
    await call(triggerOf(service), "vault::set", { key: `provider:${id}:api_key`, value: key });
  });
  print(`Stored the ${provider} API key in the vault (encrypted).`);
}

/** Loads the files again; a file it skipped is named on stderr with why, and the exit code is 1. */
export async function configReload(): Promise<void> {
  const report = await callService(
    { method: "POST", path: "/api/config/reload", body: {} },
    "config::reload",
    {},
  );
  print(report);
  reportProblems("skipped", report.problems ?? []);
}

interface Problem {
  file: string;
  message: string;
}

/** Each problem on stderr, one line each, and exit code 1 when there is one. */
function reportProblems(verb: string, problems: Problem[]): void {
  if (problems.length === 0) return;
  for (const { file, message } of problems) process.stderr.write(`agentos: ${verb} ${file}: ${message}\n`);
  process.stderr.write(`agentos: ${problems.length} file problem(s)\n`);
  process.exitCode = 1;
}

/** Reads and checks a directory's declarative files without starting anything; exit 1 on a problem. */
export function configValidate(directory = "."): void {
  const declared = readDeclared(resolve(directory));
  const integrations = readIntegrations(resolve(directory));
  const workflows = checkWorkflowFiles(resolve(directory));
  const problems = [...integrations.problems, ...declared.problems, ...workflows.problems];
  print({
    agents: declared.agents.map((agent) => `${agent.name} (${agent.file})`),
    channels: declared.channels.map(
      (channel) => `${channel.config.platform}:${channel.config.channel_id} (${channel.file})`,
    ),
    hands: declared.hands.map((hand) => `${hand.name} (${hand.file})`),
    integrations: integrations.integrations.map((entry) => `${entry.name} (${entry.file})`),
    workflows: workflows.workflows.map((workflow) => `${workflow.id} (${workflow.file})`),
    problems,
  });
  reportProblems("invalid", problems);
}

export async function configSetSecret(name: string, given?: string): Promise<void> {
  const value = await secretArgument(given, `value of ${name}`);
  await withService((service) => call(triggerOf(service), "vault::set", { key: name, value }));
  print(`Stored ${name} in the vault (encrypted).`);
}

/** One function of the service, called in a service started for it. */
const callOnce = <Id extends FunctionId>(id: Id, input: InputOf<Id>) =>
  withService((service) => call(triggerOf(service), id, input));

export async function channelsBind(platform: string, channelId: string, agent: string): Promise<void> {
  print(
    await withService(async (service) => {
      const trigger = triggerOf(service);
      const agentId = await agentIdOrName(trigger, agent);
      return call(trigger, "channel::bind", { platform, channelId, agentId });
    }),
  );
}

/**
 * The id of the agent `ref` names: an id as it is, else the one agent of that name (the CLI sees every
 * realm, so a name several realms share is refused with their ids rather than one picked).
 */
async function agentIdOrName(trigger: TriggerFn, ref: string): Promise<string> {
  const byId = await call(trigger, "agent::get", { id: ref }).catch(() => null);
  if (byId) return byId.id;
  const named: Array<{ id: string; realmId: string }> = [];
  let cursor: string | undefined;
  do {
    const page = await call(trigger, "agent::list", { limit: 200, ...(cursor ? { cursor } : {}) });
    named.push(...page.agents.filter((candidate) => candidate.name === ref));
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  if (named.length === 1) return (named[0] as { id: string }).id;
  if (named.length === 0) throw new Error(`No agent ${ref} (neither an id nor a name)`);
  const ids = named.map((candidate) => `${candidate.id} in ${candidate.realmId}`).join(", ");
  throw new Error(`${named.length} agents are named ${ref} (${ids}): give the id`);
}

export async function channelsList(options: {
  realm?: string;
  platform?: string;
  json?: boolean;
}): Promise<void> {
  const answer = await callOnce("channel::bindings", {
    realmId: options.realm,
    platform: options.platform,
    limit: 200,
  });
  output(options.json, answer, () =>
    table(
      ["platform", "channel", "agent", "realm"],
      answer.bindings.map((b) => [b.platform, b.channelId, b.agentId, b.realmId]),
    ),
  );
}

export async function channelsUnbind(platform: string, channelId: string): Promise<void> {
  await callOnce("channel::unbind", { platform, channelId });
  print(`Unbound ${platform}:${channelId}.`);
}

export async function keysCreate(options: { realm?: string; name?: string }): Promise<void> {
  const created = await callOnce("auth::keys::create", { realmId: options.realm, name: options.name });
  print(created);
  process.stderr.write("The key is shown only now; store it safely.\n");
}

export async function keysList(options: { json?: boolean }): Promise<void> {
  const answer = await callOnce("auth::keys::list", {});
  output(options.json, answer, () =>
    table(
      ["id", "name", "role", "realm", "hint", "created"],
      answer.keys.map((k) => [k.id, k.name, k.role, k.realmId, k.hint, k.createdAt]),
    ),
  );
}

export async function keysRevoke(id: string): Promise<void> {
  await callOnce("auth::keys::revoke", { id });
  print(`Revoked ${id}.`);
}

export async function health(options: { url?: string; key?: string }): Promise<void> {
  const address = options.url ? { url: options.url, from: "--url" } : serviceAddress();
  const key = options.key ?? keyFor(address.url);
  let response: Response;
  try {
    response = await fetch(new URL("/api/health", address.url), {
      headers: key ? { authorization: `Bearer ${key}` } : {},
    });
  } catch (error) {
    throw unreachable(error, address);
  }
  const body = await response.text();
  print(body);
  if (!response.ok) throw new Error(`health check failed with HTTP ${response.status}`);
}
