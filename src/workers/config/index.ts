import { join, resolve } from "node:path";
import { z } from "zod";
import { stateClient } from "../../engine/state/client.ts";
import { systemCall } from "../../engine/system-call.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { requireAdmin } from "../../shared/access.ts";
import type { FileProblem } from "../../shared/toml-file.ts";
import { resolveAgentId } from "./agents.ts";
import { applyDeclared } from "./apply.ts";
import { readDeclared } from "./files.ts";
import { reloadReport, validateReport } from "./schema.ts";

/** What integration::reload says changed (its report without the problems). */
interface IntegrationsReport {
  connected: string[];
  unchanged: string[];
  pending: string[];
  removed: string[];
}

export interface ConfigOptions {
  /** Where the declarative files live (AGENTOS_HOME, default the working directory). */
  home: string;
  /** False for a process that does no background work: nothing is loaded at start. */
  background?: boolean;
  warn: (message: string) => void;
}

/** Declarative configuration: agents and channel bindings from files, loaded at start and on reload. */
export function registerConfig(worker: WorkerClient, options: ConfigOptions): { load(): Promise<void> } {
  const trigger = worker.trigger.bind(worker);
  const state = stateClient(trigger);
  // One reload at a time in this process: two at once (an operator's and a migration's) would each
  // see an agent as not yet declared and both create it. Across processes, createOrAdopt settles it.
  let queue: Promise<unknown> = Promise.resolve();
  const reload = () => {
    const next = queue.then(reloadOnce, reloadOnce);
    queue = next.catch(() => undefined);
    return next;
  };
  const reloadOnce = async () => {
    // Integrations first: agents declared next may name their tools.
    const integrations: Partial<IntegrationsReport> & { problems: FileProblem[] } = await systemCall(
      trigger,
      "integration::reload",
      {},
    ).catch((error: Error) => ({
      problems: [{ file: join(options.home, "integrations"), message: error.message }],
    }));
    const report = await applyDeclared(state, trigger, readDeclared(options.home));
    // Workflows last: their steps may name the agents just declared.
    const workflows = await systemCall(trigger, "workflow::load_files", { directory: options.home });
    const { problems, ...changes } = integrations;
    return {
      ...report,
      integrations: changes,
      workflows: { loaded: workflows.loaded, unchanged: workflows.unchanged },
      problems: [...problems, ...report.problems, ...workflows.problems],
    };
  };

  worker.registerFunction(
    {
      id: "config::reload",
      description:
        "Load integrations/*.toml, agents/*/agent.toml, hands/*/HAND.toml, config/channels/*.toml and workflows/*.yaml again (admin): what changed, and each file's problem",
      input: z.strictObject({}),
      output: reloadReport,
    },
    async (_input, ctx) => {
      requireAdmin(ctx);
      return reload();
    },
  );
  worker.registerFunction(
    {
      id: "config::validate",
      description:
        "Check a directory's declarative files (integrations, agents, hands, channels, workflows) without applying them (admin): what each declares, and each file's problem",
      input: z.strictObject({ directory: z.string().min(1).max(4096).optional() }),
      output: validateReport,
    },
    async ({ directory }, ctx) => {
      requireAdmin(ctx);
      const root = resolve(options.home, directory ?? ".");
      const declared = readDeclared(root);
      const workflows = await systemCall(trigger, "workflow::check_files", { directory: root });
      const integrations = await systemCall(trigger, "integration::validate", { directory: root });
      return {
        agents: declared.agents.map((agent) => agent.name),
        channels: declared.channels.map(
          (channel) => `${channel.config.platform}:${channel.config.channel_id}`,
        ),
        hands: declared.hands.map((hand) => hand.name),
        integrations: integrations.integrations,
        workflows: workflows.workflows.map((workflow) => workflow.id),
        problems: [...integrations.problems, ...declared.problems, ...workflows.problems],
      };
    },
  );
  worker.registerFunction(
    {
      id: "config::agent_id",
      description:
        "The id of a realm's agent by name (declared in agents/, else made over the API): {agentId}, or 404",
      input: z.strictObject({ name: z.string().min(1).max(200), realmId: z.string().min(1).max(256) }),
      output: z.object({ agentId: z.string() }),
    },
    async ({ name, realmId }, ctx) => {
      requireAdmin(ctx);
      return { agentId: await resolveAgentId(state, trigger, realmId, name) };
    },
  );
  worker.registerRoute("config::reload", "POST", "/api/config/reload");
  worker.registerRoute("config::validate", "POST", "/api/config/validate");

  return {
    async load() {
      if (options.background === false) return;
      const report = await reload().catch((error: Error) => ({
        problems: [{ file: options.home, message: error.message }],
      }));
      for (const problem of report.problems)
        options.warn(`Configuration: ${problem.file}: ${problem.message}`);
    },
  };
}
