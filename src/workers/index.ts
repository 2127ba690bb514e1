import { type Config, ConfigError } from "../config/env.ts";
import type { Engine } from "../engine/engine.ts";
import { registerAgents } from "./agents/index.ts";
import { registerBridge } from "./bridge/index.ts";
import { registerCatalog } from "./catalog/index.ts";
import { registerChannels } from "./channels/index.ts";
import { registerChatCompletions } from "./chat-completions/index.ts";
import { registerConfig } from "./config/index.ts";
import { registerCouncil } from "./council/index.ts";
import { registerDirective } from "./directive/index.ts";
import { registerHierarchy } from "./hierarchy/index.ts";
import { registerIntegrations } from "./integrations/index.ts";
import { registerKg } from "./kg/index.ts";
import { registerLedger } from "./ledger/index.ts";
import { registerMemory } from "./memory/index.ts";
import { registerMigrate } from "./migrate/index.ts";
import { registerMission } from "./mission/index.ts";
import { registerPulse } from "./pulse/index.ts";
import { registerRealm } from "./realm/index.ts";
import { register as registerSecurity } from "./security/index.ts";
import { registerSwarm } from "./swarm/index.ts";
import { registerTools } from "./tools/index.ts";
import { register as registerVault } from "./vault/index.ts";
import { loadVaultKey } from "./vault/key.ts";
import { registerWebTools } from "./web/index.ts";
import { registerWorkflow } from "./workflow/index.ts";

export interface WorkersOptions {
  /**
   * False for a process that uses the service's storage without serving it (a CLI command): no pulse
   * is scheduled, no pulse lease is recovered, no workflow file is loaded and no workflow run is
   * resumed, since all of those belong to the process that serves (and a second process on the same
   * data would disturb it). Default true.
   */
  background?: boolean;
  /** Registers work to do first on a clean shutdown, given its deadline (before workers and storage close). */
  onStopping?: (hook: (deadline: number) => Promise<void>) => void;
}

/**
 * Every domain worker, registered in-process. Each gets its own WorkerClient and talks only via
 * trigger. Resolves when their start-up work is done (the default realm exists, pulses are scheduled).
 */
export async function registerWorkers(
  engine: Engine,
  config: Config,
  options: WorkersOptions = {},
): Promise<void> {
  const background = options.background ?? true;
  registerSecurity(engine.worker("security", "Audit log: a SHA-256 hash chain"));
  registerVault(engine.worker("vault", "Secrets encrypted at rest (AES-256-GCM)"), {
    key: vaultKeyFor(engine, config),
  });
  try {
    registerCatalog(engine.worker("catalog", "Model catalog: tiers, prices, aliases, providers"), {
      env: config.env,
      catalogFile: config.catalogFile,
    });
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  registerMemory(engine.worker("memory", "Agent memory: recall by words and meaning, with recency"), {
    env: config.env,
    logger: engine.logger,
    background,
    onShutdown: (hook) => engine.onShutdown(hook),
    queue: { cluster: Boolean(config.databaseUrl) },
    maxEntriesPerAgent: config.memoryMaxEntriesPerAgent,
  });
  const warn = (message: string) => engine.logger.warn(message);
  registerKg(engine.worker("kg", "Knowledge graph: each agent's temporal graph, versioned and indexed"), {
    background,
    retentionDays: config.kgHistoryRetentionDays,
    warn,
  });
  registerSwarm(engine.worker("swarm", "Swarms: a realm's agents on one goal, deciding by vote"), {
    background,
    retentionDays: config.swarmRetentionDays,
    warn,
  });
  registerWebTools(engine.worker("web", "Web fetch and search tools (SSRF-guarded)"), {
    env: config.env,
    // Tests only: lets the web tools reach loopback and private addresses.
    allowPrivateNetwork: config.env.AGENTOS_ALLOW_PRIVATE_NETWORK === "1",
  });
  registerTools(engine.worker("tools", "Agent tools: files, shell, code, data, git, system, web, browser"), {
    env: config.env,
    dataDir: config.dataDir,
    allowPrivateNetwork: config.env.AGENTOS_ALLOW_PRIVATE_NETWORK === "1",
    allowedAddresses: config.env.AGENTOS_ALLOWED_ADDRESSES?.split(",").map((address) => address.trim()),
    background,
    warn: (message) => engine.logger.warn(message),
    onShutdown: (hook) => engine.onShutdown(hook),
  });
  registerAgents(engine.worker("agents", "Agents: configuration, sessions, chat turns"), {
    env: config.env,
    cluster: Boolean(config.databaseUrl),
  });
  registerWorkflow(engine.worker("workflow", "Durable workflows: runs checkpointed after every step"), {
    cluster: Boolean(config.databaseUrl),
    leaseMs: config.workflowLeaseMs,
    resumeGraceMs: config.workflowResumeGraceMs,
    runsPerRealm: config.workflowRunsPerRealm,
    maxDepth: config.workflowMaxDepth,
    retentionDays: config.workflowRunRetentionDays,
    startup: background,
    warn: (message) => engine.logger.warn(message),
    onStopping: options.onStopping,
  });
  registerChannels(
    engine.worker("channels", "Channels: verified platform webhooks, bindings, durable replies"),
    {
      env: config.env,
      allowPrivateNetwork: config.env.AGENTOS_ALLOW_PRIVATE_NETWORK === "1",
      background,
      cluster: Boolean(config.databaseUrl),
      concurrency: config.channelConcurrency,
      senderTurns: config.channelSenderTurns,
    },
  );
  registerChatCompletions(engine.worker("chat-completions", "OpenAI-compatible /v1 endpoint"), {
    env: config.env,
  });
  const realm = registerRealm(engine.worker("realm", "Realms: multi-tenant isolation, export and import"));
  registerDirective(engine.worker("directive", "Directives: goal trees with compare-and-swap updates"));
  const ledger = registerLedger(
    engine.worker("ledger", "Ledger: budgets, spend and summaries from running totals"),
    { background, onShutdown: (hook) => engine.onShutdown(hook) },
  );
  registerHierarchy(engine.worker("hierarchy", "Hierarchy: the org chart of a realm's agents"));
  registerMission(engine.worker("mission", "Missions: a realm's work items, taken by atomic checkout"));
  // Not awaited: effects a stopped process left pending are applied in the background (they may be slow).
  registerCouncil(engine.worker("council", "Council: proposals decided by vote, with a hash-chained log"), {
    background,
  });
  const bridge = registerBridge(
    engine.worker("bridge", "Bridge: supervised external runtimes and coding CLIs"),
    {
      allowPrivateNetwork: config.env.AGENTOS_ALLOW_PRIVATE_NETWORK === "1",
      startup: background,
      runsPerRealm: config.bridgeRunsPerRealm,
    },
  );
  const pulse = registerPulse(engine.worker("pulse", "Pulse: agents woken on a cron schedule"), {
    embedded: !config.databaseUrl,
    background,
    runsPerRealm: config.pulseRunsPerRealm,
    warn: (message) => engine.logger.warn(message),
  });
  registerIntegrations(engine.worker("integrations", "Integrations: MCP servers and HTTP tools from files"), {
    home: config.home,
    allowPrivateNetwork: config.env.AGENTOS_ALLOW_PRIVATE_NETWORK === "1",
    unregister: (id) => engine.unregisterFunction(id),
    onShutdown: (hook) => engine.onShutdown(hook),
  });
  registerMigrate(engine.worker("migrate", "Migration from six agent frameworks into declarative files"), {
    home: config.home,
    dataDir: config.dataDir,
    extraRoots: config.env.AGENTOS_MIGRATE_ROOTS,
  });
  const declarative = registerConfig(
    engine.worker("config", "Declarative configuration: agents and channels from files"),
    {
      home: config.home,
      background,
      warn: (message) => engine.logger.warn(message),
    },
  );
  // The default realm must exist before pulses (and agents) refer to it.
  await realm.ready;
  await ledger.ready;
  await pulse.ready;
  await bridge.ready;
  await declarative.load();
}

function vaultKeyFor(engine: Engine, config: Config): Buffer {
  // Each node would otherwise generate its own key file and could not read secrets written by another.
  if (config.databaseUrl && !config.vaultKey) {
    throw new ConfigError(
      "AGENTOS_VAULT_KEY is required with AGENTOS_DATABASE_URL: every node must encrypt secrets with the same key",
    );
  }
  return loadVaultKey({
    env: config.vaultKey,
    dataDir: config.dataDir,
    warn: (message) => engine.logger.warn(message),
  });
}
