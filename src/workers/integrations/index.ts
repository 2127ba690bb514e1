import { z } from "zod";
import { call } from "../../engine/call.ts";
import { systemPrincipal } from "../../engine/types.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { isPrivileged, requireAdmin } from "../../shared/access.ts";
import { systemResolver } from "../../shared/net/guarded-request.ts";
import { readIntegrations } from "./files.ts";
import { IntegrationRegistry } from "./registry.ts";
import { integrationCheck, integrationList, integrationReport } from "./schema.ts";

export interface IntegrationsOptions {
  /** Where `integrations/*.toml` live (AGENTOS_HOME). */
  home: string;
  allowPrivateNetwork: boolean;
  /** Takes a tool function away again when its integration changes or leaves. */
  unregister(id: string): void;
  /** Called once at shutdown by the engine: closes every MCP connection (stdio servers exit). */
  onShutdown(hook: () => Promise<void>): void;
}

/**
 * Integrations: MCP servers and plain HTTP tools declared in `integrations/*.toml`, whose tools become
 * functions (`mcp::<name>::<tool>`, `http::<name>::<tool>`) that agents and workflows call like any other.
 */
export function registerIntegrations(worker: WorkerClient, options: IntegrationsOptions): void {
  const registry = new IntegrationRegistry(worker, options.unregister, {
    policy: { allowPrivateNetwork: options.allowPrivateNetwork, resolve: systemResolver },
    async readSecret(name) {
      const found = await call(
        worker.trigger.bind(worker),
        "vault::get",
        { key: name },
        { auth: systemPrincipal },
      );
      if (!found?.value) throw new Error(`no vault entry ${name}`);
      return found.value;
    },
  });
  options.onShutdown(() => registry.closeAll());

  worker.registerFunction(
    {
      id: "integration::reload",
      description: "Read integrations/*.toml again and connect what changed (admin): the report",
      input: z.strictObject({}),
      output: integrationReport,
    },
    async (_input, ctx) => {
      requireAdmin(ctx);
      const { integrations, problems } = readIntegrations(options.home);
      const report = await registry.apply(integrations);
      return { ...report, problems: [...problems, ...report.problems] };
    },
  );
  worker.registerFunction(
    {
      id: "integration::validate",
      description:
        "Check the integrations/*.toml of a directory without connecting (admin): {integrations, problems}",
      input: z.strictObject({ directory: z.string().min(1).max(4096) }),
      output: integrationCheck,
    },
    ({ directory }, ctx) => {
      requireAdmin(ctx);
      const { integrations, problems } = readIntegrations(directory);
      return { integrations: integrations.map((entry) => entry.name), problems };
    },
  );
  worker.registerFunction(
    {
      id: "integration::list",
      description:
        "The integrations and their tool functions: {integrations: [{name, status, functions, source?, error?}]}. A realm key sees those its realm may call.",
      input: z.strictObject({}),
      output: integrationList,
    },
    (_input, ctx) => {
      const all = registry.list();
      if (isPrivileged(ctx.auth)) return { integrations: all };
      const realm = ctx.auth.kind === "realm" ? ctx.auth.realmId : undefined;
      return {
        integrations: all
          .filter((entry) => !entry.realms || (realm !== undefined && entry.realms.includes(realm)))
          .map(({ realms: _realms, file: _file, ...entry }) => entry),
      };
    },
  );
  worker.registerRoute("integration::list", "GET", "/api/integrations");
}
