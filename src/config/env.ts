import { isIP } from "node:net";
import { resolve } from "node:path";
import { z } from "zod";
import {
  type DatabaseTimeouts,
  DEFAULT_DATABASE_TIMEOUTS,
  DEFAULT_POOL_TOTAL,
  MIN_POOL_TOTAL,
} from "../engine/state/pg-pool.ts";
import { describeZodError } from "../shared/errors.ts";
import { DEFAULT_MEMORY_MAX_ENTRIES_PER_AGENT } from "../shared/limits.ts";
import { sandboxEnvSchema } from "../shared/process/sandbox/settings.ts";

export const rateClasses = ["read", "write", "message", "workflow_run", "gateway"] as const;
export type RateClass = (typeof rateClasses)[number];
/** The gateway's limit may be left out (configs written before it existed): its default applies. */
export type RateLimits = Record<Exclude<RateClass, "gateway">, number> & { gateway?: number };

/**
 * Requests per hour per class: the specification's numbers (per client IP) for its four classes, and
 * for the OpenAI-compatible gateway (`/v1/*`, which the spec leaves open) a budget per API key fit for
 * a gateway that programs call in loops: 100 a minute on average, all of it in a burst if need be.
 */
export const defaultRateLimits: Required<RateLimits> = {
  read: 200,
  write: 100,
  message: 60,
  workflow_run: 100,
  gateway: 6000,
};

const port = z.coerce.number().int().min(0).max(65535);

/** A database time limit in ms: 0 (off) or at least 100 ms, at most an hour. */
const databaseTimeout = (fallback: number) =>
  z.coerce
    .number()
    .int()
    .refine((ms) => ms === 0 || (ms >= 100 && ms <= 3_600_000), "must be 0 (off) or 100 to 3600000")
    .default(fallback);

/** Days finished work is kept (0: forever, the default): a whole number, at most a century. */
const retentionDays = z.coerce
  .number({ error: "must be a whole number of days (0: keep forever)" })
  .int("must be a whole number of days (0: keep forever)")
  .min(0, "must be 0 (keep forever) or a positive number of days")
  .max(36_500, "must be at most 36500 days")
  .default(0);

const envSchema = z.object({
  AGENTOS_PORT: port.default(3111),
  AGENTOS_HOST: z.string().min(1).default("0.0.0.0"),
  AGENTOS_ENGINE_PORT: port.default(49134),
  AGENTOS_ENGINE_HOST: z.string().min(1).default("127.0.0.1"),
  AGENTOS_ENGINE_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  AGENTOS_ENGINE_MAX_FRAME_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(256 * 1024 * 1024)
    .default(8 * 1024 * 1024),
  AGENTOS_DATA_DIR: z.string().min(1).default("./data"),
  /** Where the declarative files live (agents/, config/channels/, workflows/): default the working directory. */
  AGENTOS_HOME: z.string().min(1).default("."),
  AGENTOS_DATABASE_URL: z
    .string()
    .url()
    .refine((url) => /^postgres(ql)?:\/\//i.test(url), "must be a postgres:// or postgresql:// URL")
    .optional(),
  /** Cluster mode: the most PostgreSQL connections one node opens, all pools together (see poolSizes). */
  AGENTOS_DATABASE_POOL_SIZE: z.coerce
    .number()
    .int()
    .min(MIN_POOL_TOTAL)
    .max(10_000)
    .default(DEFAULT_POOL_TOTAL),
  /** Cluster mode: time limits on the database (see DatabaseTimeouts); 0 turns one off. */
  AGENTOS_DATABASE_CONNECT_TIMEOUT_MS: databaseTimeout(DEFAULT_DATABASE_TIMEOUTS.connectMs),
  AGENTOS_DATABASE_STATEMENT_TIMEOUT_MS: databaseTimeout(DEFAULT_DATABASE_TIMEOUTS.statementMs),
  AGENTOS_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: databaseTimeout(
    DEFAULT_DATABASE_TIMEOUTS.idleInTransactionMs,
  ),
  AGENTOS_API_KEY: z.string().min(16, "must be at least 16 characters").optional(),
  AGENTOS_VAULT_KEY: z.string().min(1).optional(),
  AGENTOS_TRUST_PROXY: z.string().optional(),
  AGENTOS_RATE_LIMITS: z.string().optional(),
  AGENTOS_RATE_LIMIT_ADMIN: z.enum(["0", "1", "false", "true"]).default("0"),
  AGENTOS_CATALOG_FILE: z.string().min(1).optional(),
  /**
   * The embedding model of agents without their own `embeddingModel` (unset: none, text recall only).
   * Checked here for its form; the catalog worker resolves it from `env` at start (a name that is no
   * embedding model stops the start there) and the memory worker reads it through effectiveEmbeddingModel.
   */
  AGENTOS_EMBEDDING_MODEL: z.string().trim().min(1).max(512, "must be at most 512 characters").optional(),
  /** Most entries one agent's memory holds (see src/workers/memory/entry-cap.ts). */
  AGENTOS_MEMORY_MAX_ENTRIES_PER_AGENT: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000_000)
    .default(DEFAULT_MEMORY_MAX_ENTRIES_PER_AGENT),
  AGENTOS_RECEIVE_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(15_000),
  AGENTOS_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(10_000),
  AGENTOS_MAX_IN_FLIGHT: z.coerce.number().int().min(1).max(1_000_000).default(2048),
  AGENTOS_MAX_IN_FLIGHT_PER_CLIENT: z.coerce.number().int().min(1).max(1_000_000).default(256),
  AGENTOS_MAX_IN_FLIGHT_PER_REALM: z.coerce.number().int().min(1).max(1_000_000).default(128),
  AGENTOS_PULSE_RUNS_PER_REALM: z.coerce.number().int().min(1).max(100_000).default(16),
  AGENTOS_WORKFLOW_RUNS_PER_REALM: z.coerce.number().int().min(1).max(100_000).default(32),
  /** Levels workflows nest (a step running a workflow is one down); DEFAULT_MAX_WORKFLOW_DEPTH of workflow/nesting.ts. */
  AGENTOS_WORKFLOW_MAX_DEPTH: z.coerce.number().int().min(1).max(100).default(8),
  AGENTOS_BRIDGE_RUNS_PER_REALM: z.coerce.number().int().min(1).max(100_000).default(16),
  AGENTOS_WORKFLOW_LEASE_MS: z.coerce.number().int().min(1000).max(3_600_000).default(15_000),
  AGENTOS_CHANNEL_CONCURRENCY: z.coerce.number().int().min(1).max(10_000).default(64),
  /** Turns one sender may cause per chat channel in 10 minutes (0: no bound); DEFAULT_SENDER_TURNS of channels/turn-limit.ts. */
  AGENTOS_CHANNEL_SENDER_TURNS: z.coerce.number().int().min(0).max(1_000_000).default(60),
  AGENTOS_WORKFLOW_RESUME_GRACE_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
  AGENTOS_WORKFLOW_RUN_RETENTION_DAYS: retentionDays,
  AGENTOS_SWARM_RETENTION_DAYS: retentionDays,
  AGENTOS_KG_HISTORY_RETENTION_DAYS: retentionDays,
  /** Development and tests: every JSON answer is checked against its documented output schema. */
  AGENTOS_CHECK_OUTPUTS: z.enum(["0", "1", "false", "true"]).default("0"),
  AGENTOS_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  // Checked here so a bad value stops the start; the tools worker reads them again from env.
  ...sandboxEnvSchema.shape,
});

export interface Config {
  port: number;
  host: string;
  enginePort: number;
  /** The iii worker port binds loopback unless told otherwise; elsewhere it needs a token. */
  engineHost: string;
  engineToken?: string;
  engineMaxFrameBytes: number;
  dataDir: string;
  /** The service's home: agents/, config/channels/ and workflows/ are read from here. */
  home: string;
  databaseUrl?: string;
  /** Cluster mode: the most connections this node opens to the database, all pools together. */
  databasePoolSize: number;
  databaseTimeouts: DatabaseTimeouts;
  apiKey?: string;
  vaultKey?: string;
  /** Answers that do not match their function's documented output become a 500 naming the difference. */
  checkOutputs: boolean;
  /** Fastify's trustProxy: false, true, a hop count, or addresses/CIDRs whose X-Forwarded-For is believed. */
  trustProxy: boolean | number | string[];
  /** Requests per hour per class, or false to switch rate limiting off. */
  rateLimits: RateLimits | false;
  /**
   * Whether admin keys are rate limited too. Off by default: the operator browsing the console or
   * calling the gateway with an admin key must never be locked out of their own service.
   */
  rateLimitAdmin: boolean;
  logLevel: string;
  /** A JSON file adding or replacing catalog models, aliases, providers and defaults. */
  catalogFile?: string;
  /** Everything else the workers read from the environment (provider keys and base URLs, tool keys). */
  env: NodeJS.ProcessEnv;
  /** How long a route's function may run. */
  requestTimeoutMs: number;
  /** How long a client may take to send a whole request, headers and body (a slow body is cut off). */
  receiveTimeoutMs: number;
  /** How long a client may take to send the request headers. */
  headersTimeoutMs: number;
  maxInFlight: number;
  /** Requests in flight per client address, so one client (or a handful) cannot take every slot. */
  maxInFlightPerClient: number;
  /**
   * Requests in flight per realm key's realm, whatever their addresses: one tenant spread over many
   * addresses cannot take every slot, nor every connection to a provider (256 per host).
   */
  maxInFlightPerRealm: number;
  /** Cron pulse runs of one realm at once on a node: more ticks are skipped with `realm_busy`. */
  pulseRunsPerRealm: number;
  /** Asynchronous workflow runs of one realm's keys executing at once on a node: more are a 429. */
  workflowRunsPerRealm: number;
  /** How deep workflows nest: a run one level deeper (A running A, A → B → A…) is a 422 naming the chain. */
  workflowMaxDepth: number;
  /** Bridge runs of one realm's keys going at once on this node (AGENTOS_BRIDGE_RUNS_PER_REALM). */
  bridgeRunsPerRealm: number;
  bodyLimitBytes: number;
  /** Cluster mode: how long a node holds a workflow run it executes without renewing it. */
  workflowLeaseMs: number;
  /** How long a resumed run waits for its steps' functions (remote workers reconnecting). */
  workflowResumeGraceMs: number;
  /** Channel jobs (agent turns and replies) one process works on at once, shared fairly among realms. */
  channelConcurrency: number;
  /** Turns one sender may cause per chat channel and 10-minute window, on every platform; 0: no bound. */
  channelSenderTurns: number;
  /** Most entries one agent's memory holds, whoever stores them: another store is a 409 naming the cap. */
  memoryMaxEntriesPerAgent: number;
  /** Days a finished workflow run (completed, failed, cancelled, interrupted) is kept; 0: forever. */
  workflowRunRetentionDays: number;
  /** Days an ended swarm (dissolved, expired) is kept with its messages; 0: forever. */
  swarmRetentionDays: number;
  /** Days a superseded knowledge-graph version is kept (current versions always are); 0: forever. */
  kgHistoryRetentionDays: number;
}

export class ConfigError extends Error {}

/** Reads AGENTOS_* variables; a bad value stops the start with a message naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // A variable set to nothing (common in compose files) means "not set", not "empty" or port 0.
  const given = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ""),
  );
  const parsed = envSchema.safeParse(given);
  if (!parsed.success) throw new ConfigError(`Invalid configuration: ${describeZodError(parsed.error)}`);
  const vars = parsed.data;
  return {
    port: vars.AGENTOS_PORT,
    host: vars.AGENTOS_HOST,
    enginePort: vars.AGENTOS_ENGINE_PORT,
    engineHost: vars.AGENTOS_ENGINE_HOST,
    engineToken: vars.AGENTOS_ENGINE_TOKEN,
    engineMaxFrameBytes: vars.AGENTOS_ENGINE_MAX_FRAME_BYTES,
    dataDir: resolve(vars.AGENTOS_DATA_DIR),
    home: resolve(vars.AGENTOS_HOME),
    databaseUrl: vars.AGENTOS_DATABASE_URL,
    databasePoolSize: vars.AGENTOS_DATABASE_POOL_SIZE,
    databaseTimeouts: {
      connectMs: vars.AGENTOS_DATABASE_CONNECT_TIMEOUT_MS,
      statementMs: vars.AGENTOS_DATABASE_STATEMENT_TIMEOUT_MS,
      idleInTransactionMs: vars.AGENTOS_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    },
    apiKey: vars.AGENTOS_API_KEY,
    vaultKey: vars.AGENTOS_VAULT_KEY,
    trustProxy: parseTrustProxy(vars.AGENTOS_TRUST_PROXY),
    checkOutputs: vars.AGENTOS_CHECK_OUTPUTS === "1" || vars.AGENTOS_CHECK_OUTPUTS === "true",
    rateLimits: parseRateLimits(vars.AGENTOS_RATE_LIMITS),
    rateLimitAdmin: vars.AGENTOS_RATE_LIMIT_ADMIN === "1" || vars.AGENTOS_RATE_LIMIT_ADMIN === "true",
    logLevel: vars.AGENTOS_LOG_LEVEL,
    catalogFile: vars.AGENTOS_CATALOG_FILE,
    env,
    requestTimeoutMs: 300_000,
    receiveTimeoutMs: vars.AGENTOS_RECEIVE_TIMEOUT_MS,
    headersTimeoutMs: Math.min(vars.AGENTOS_HEADERS_TIMEOUT_MS, vars.AGENTOS_RECEIVE_TIMEOUT_MS),
    maxInFlight: vars.AGENTOS_MAX_IN_FLIGHT,
    maxInFlightPerClient: vars.AGENTOS_MAX_IN_FLIGHT_PER_CLIENT,
    maxInFlightPerRealm: vars.AGENTOS_MAX_IN_FLIGHT_PER_REALM,
    pulseRunsPerRealm: vars.AGENTOS_PULSE_RUNS_PER_REALM,
    workflowRunsPerRealm: vars.AGENTOS_WORKFLOW_RUNS_PER_REALM,
    workflowMaxDepth: vars.AGENTOS_WORKFLOW_MAX_DEPTH,
    bridgeRunsPerRealm: vars.AGENTOS_BRIDGE_RUNS_PER_REALM,
    workflowLeaseMs: vars.AGENTOS_WORKFLOW_LEASE_MS,
    channelConcurrency: vars.AGENTOS_CHANNEL_CONCURRENCY,
    channelSenderTurns: vars.AGENTOS_CHANNEL_SENDER_TURNS,
    workflowResumeGraceMs: vars.AGENTOS_WORKFLOW_RESUME_GRACE_MS,
    memoryMaxEntriesPerAgent: vars.AGENTOS_MEMORY_MAX_ENTRIES_PER_AGENT,
    workflowRunRetentionDays: vars.AGENTOS_WORKFLOW_RUN_RETENTION_DAYS,
    swarmRetentionDays: vars.AGENTOS_SWARM_RETENTION_DAYS,
    kgHistoryRetentionDays: vars.AGENTOS_KG_HISTORY_RETENTION_DAYS,
    bodyLimitBytes: 1024 * 1024,
  };
}

function parseTrustProxy(value: string | undefined): Config["trustProxy"] {
  if (value === undefined || value === "" || value === "false") return false;
  if (value === "true") return true;
  if (/^\d+$/.test(value)) return Number(value);
  const entries = value.split(",").map((part) => part.trim());
  const bad = entries.find((entry) => !isProxyEntry(entry));
  if (bad !== undefined) {
    throw new ConfigError(
      `Invalid AGENTOS_TRUST_PROXY entry "${bad}": expected "true", a hop count, or a comma list of IP addresses, CIDR ranges or loopback, linklocal, uniquelocal`,
    );
  }
  return entries;
}

/** What proxy-addr (Fastify's trustProxy) takes: an address, a range (prefix or mask), or a name. */
function isProxyEntry(entry: string): boolean {
  if (["loopback", "linklocal", "uniquelocal"].includes(entry)) return true;
  const [address = "", range, ...rest] = entry.split("/");
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (range === undefined) return true;
  if (/^\d{1,3}$/.test(range)) return Number(range) <= (family === 4 ? 32 : 128);
  return family === 4 && isIP(range) === 4;
}

/** `off`, or `read=200,write=100,message=60,workflow_run=100,gateway=6000` (unlisted classes keep their default). */
export function parseRateLimits(value: string | undefined): RateLimits | false {
  if (value === undefined || value === "") return { ...defaultRateLimits };
  if (value === "off") return false;
  const limits = { ...defaultRateLimits };
  for (const part of value.split(",")) {
    const [name, count] = part.split("=").map((text) => text.trim());
    if (!rateClasses.includes(name as RateClass) || !/^\d+$/.test(count ?? "") || Number(count) < 1) {
      throw new ConfigError(
        `Invalid AGENTOS_RATE_LIMITS entry "${part}": expected <class>=<requests per hour> with class one of ${rateClasses.join(", ")}, or "off"`,
      );
    }
    limits[name as RateClass] = Number(count);
  }
  return limits;
}
