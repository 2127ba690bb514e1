import { resolve } from "node:path";
import { z } from "zod";
import { stateClient } from "../../engine/state/client.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { requireAdmin } from "../../shared/access.ts";
import { applyDeclared } from "./apply.ts";
import { readDeclared } from "./files.ts";

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
  const reload = () => applyDeclared(state, trigger, readDeclared(options.home));

  worker.registerFunction(
    {
      id: "config::reload",
      description:
        "Load agents/*/agent.toml and config/channels/*.toml again (admin): what changed, and each file's problem",
      input: z.strictObject({}),
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
        "Check a directory's declarative files without applying them (admin): {agents, channels, problems}",
      input: z.strictObject({ directory: z.string().min(1).max(4096).optional() }),
    },
    ({ directory }, ctx) => {
      requireAdmin(ctx);
      const declared = readDeclared(resolve(options.home, directory ?? "."));
      return {
        agents: declared.agents.map((agent) => agent.name),
        channels: declared.channels.map(
          (channel) => `${channel.config.platform}:${channel.config.channel_id}`,
        ),
        hands: declared.hands.map((hand) => hand.name),
        problems: declared.problems,
      };
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
