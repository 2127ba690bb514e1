import { createHash } from "node:crypto";
import { z } from "zod";
import type { InvocationContext } from "../../engine/types.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { isPrivileged } from "../../shared/access.ts";
import { badRequest, forbidden, isAppError } from "../../shared/errors.ts";
import { type NetworkPolicy, policyForCaller } from "../../shared/net/guarded-request.ts";
import type { FileProblem } from "../../shared/toml-file.ts";
import type { DeclaredIntegration } from "./files.ts";
import { callHttpTool, httpToolSchema } from "./http-tool.ts";
import { McpConnection } from "./mcp.ts";
import type { IntegrationFile, integrationInfo } from "./schema.ts";

export interface IntegrationReport {
  connected: string[];
  unchanged: string[];
  pending: string[];
  removed: string[];
  problems: FileProblem[];
}

export type IntegrationInfo = z.infer<typeof integrationInfo>;

interface Live {
  hash: string;
  info: IntegrationInfo;
  connection?: McpConnection;
}

export interface RegistryDeps {
  policy: NetworkPolicy;
  /** The vault entry's value; throws when it is not set. */
  readSecret(name: string): Promise<string>;
}

/** Tool ids in function ids: anything outside `[A-Za-z0-9_.-]` becomes `_`. */
const segment = (name: string) => name.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 64);

/**
 * The integrations this process serves. `apply` makes them match the files: an unchanged file keeps its
 * connection, a changed or removed one is closed and its functions leave, a new one connects and
 * registers one function per tool. A server that does not connect is a problem of its file only.
 */
export class IntegrationRegistry {
  private readonly live = new Map<string, Live>();

  private readonly worker: WorkerClient;
  private readonly unregister: (id: string) => void;
  private readonly deps: RegistryDeps;

  constructor(worker: WorkerClient, unregister: (id: string) => void, deps: RegistryDeps) {
    this.worker = worker;
    this.unregister = unregister;
    this.deps = deps;
  }

  list(): IntegrationInfo[] {
    return [...this.live.values()].map((entry) => entry.info).sort((a, b) => a.name.localeCompare(b.name));
  }

  async apply(declared: DeclaredIntegration[]): Promise<IntegrationReport> {
    const report: IntegrationReport = {
      connected: [],
      unchanged: [],
      pending: [],
      removed: [],
      problems: [],
    };
    const wanted = new Map(declared.map((entry) => [entry.name, entry]));
    for (const [name, entry] of this.live) {
      const next = wanted.get(name);
      if (next && hashOf(next.config) === entry.hash && entry.info.status !== "failed") continue;
      await this.drop(name);
      if (!next) report.removed.push(name);
    }
    for (const { name, file, config } of declared) {
      if (this.live.has(name)) {
        report.unchanged.push(name);
        continue;
      }
      const info: IntegrationInfo = {
        name,
        file,
        status: "pending",
        functions: [],
        realms: config.realms,
        source: config.source,
      };
      const entry: Live = { hash: hashOf(config), info };
      this.live.set(name, entry);
      if ((!config.mcp && !config.http?.length) || !config.enabled) {
        report.pending.push(name);
        continue;
      }
      try {
        await this.connect(name, config, entry);
        info.status = "connected";
        report.connected.push(name);
      } catch (error) {
        await this.drop(name);
        this.live.set(name, {
          ...entry,
          info: { ...info, status: "failed", functions: [], error: (error as Error).message },
        });
        report.problems.push({ file, message: isAppError(error) ? error.message : String(error) });
      }
    }
    return report;
  }

  async closeAll(): Promise<void> {
    for (const name of [...this.live.keys()]) await this.drop(name);
  }

  private async connect(name: string, config: IntegrationFile, entry: Live): Promise<void> {
    const guard = (ctx: InvocationContext) => {
      if (!config.realms || isPrivileged(ctx.auth)) return;
      const realm = ctx.auth.kind === "realm" ? ctx.auth.realmId : undefined;
      if (!realm || !config.realms.includes(realm))
        throw forbidden(
          `Integration ${name} is not available to ${realm ? `realm ${realm}` : "this caller"}`,
        );
    };
    if (config.mcp) {
      const connection = new McpConnection(
        name,
        config.mcp,
        await this.secrets(config.mcp.secrets),
        this.deps.policy,
      );
      entry.connection = connection;
      for (const tool of await connection.open()) {
        const id = `mcp::${segment(name)}::${segment(tool.name)}`;
        this.register(
          entry,
          config.realms,
          id,
          tool.description ?? `${tool.name} of ${name}`,
          tool.inputSchema,
          (args, ctx) => {
            guard(ctx);
            return connection.call(tool.name, args, ctx.signal);
          },
        );
      }
    }
    for (const tool of config.http ?? []) {
      const secrets = await this.secrets(tool.secrets);
      const id = `http::${segment(name)}::${tool.name}`;
      this.register(
        entry,
        config.realms,
        id,
        tool.description ?? `${tool.method} ${tool.url}`,
        httpToolSchema(tool),
        (args, ctx) => {
          guard(ctx);
          // A URL template may put an argument in the host: the caller's realm pays for its lookups.
          return callHttpTool(tool, args, secrets, policyForCaller(this.deps.policy, ctx.auth), ctx.signal);
        },
      );
    }
  }

  private register(
    entry: Live,
    realms: string[] | undefined,
    id: string,
    description: string,
    schema: Record<string, unknown>,
    handler: (args: Record<string, unknown>, ctx: InvocationContext) => Promise<unknown>,
  ): void {
    this.worker.registerFunction(
      {
        id,
        description,
        input: inputFromJsonSchema(schema),
        metadata: {
          integration: entry.info.name,
          request_format: schema,
          ...(realms ? { realms } : {}),
        },
      },
      (args, ctx) => handler(args as Record<string, unknown>, ctx),
    );
    entry.info.functions.push(id);
  }

  private async secrets(refs: Record<string, string> | undefined): Promise<Record<string, string>> {
    const values: Record<string, string> = {};
    for (const [name, vaultName] of Object.entries(refs ?? {})) {
      values[name] = await this.deps.readSecret(vaultName).catch(() => {
        throw badRequest(
          `secrets.${name}: the vault has no entry ${vaultName} (set it with agentos config set-secret ${vaultName} <value>)`,
        );
      });
    }
    return values;
  }

  private async drop(name: string): Promise<void> {
    const entry = this.live.get(name);
    if (!entry) return;
    this.live.delete(name);
    for (const id of entry.info.functions) this.unregister(id);
    await entry.connection?.close();
  }
}

function hashOf(config: IntegrationFile): string {
  return createHash("sha256").update(JSON.stringify(config)).digest("hex");
}

/**
 * The server's JSON Schema as the function's input, so a bad call is refused with the field named
 * before it reaches the server. A schema zod cannot take becomes "any object" (the server still checks).
 */
function inputFromJsonSchema(schema: Record<string, unknown>): z.ZodType {
  try {
    return z.fromJSONSchema({ type: "object", ...(withoutPatterns(schema) as object) } as Parameters<
      typeof z.fromJSONSchema
    >[0]);
  } catch {
    return z.record(z.string(), z.unknown());
  }
}

/** Keywords whose values are data, not schemas: left as they are. */
const DATA_KEYWORDS = new Set(["const", "enum", "default", "examples", "required"]);
/** Keywords whose values map names (not keywords) to schemas. */
const SCHEMA_MAPS = new Set(["properties", "$defs", "definitions", "dependentSchemas"]);

/**
 * The schema without its regular expressions (`pattern`, `patternProperties`), which the server chose and
 * a caller's argument would be run against here: one written to backtrack (`^(a+)+$`) would hold the
 * whole service for as long as the argument likes. The server still checks them.
 */
function withoutPatterns(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutPatterns);
  if (typeof schema !== "object" || schema === null) return schema;
  const out: Record<string, unknown> = {};
  const loose = "patternProperties" in schema;
  for (const [key, value] of Object.entries(schema)) {
    if (key === "pattern" || key === "patternProperties") continue;
    // Names only patternProperties allowed would now be refused: let them through instead.
    if (key === "additionalProperties" && loose) continue;
    if (DATA_KEYWORDS.has(key)) out[key] = value;
    else if (SCHEMA_MAPS.has(key) && typeof value === "object" && value !== null && !Array.isArray(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, withoutPatterns(sub)]));
    else out[key] = withoutPatterns(value);
  }
  return out;
}
