import { z } from "zod";
import { requestSchema } from "../engine/builtins.ts";
import type { Engine } from "../engine/engine.ts";
import { isPrivileged, requireAdmin } from "../shared/access.ts";
import { AppError } from "../shared/errors.ts";
import { openToRealm } from "../shared/function-realms.ts";
import { isInternalFunction, isStepCallable } from "../shared/internal-functions.ts";
import { sandboxStatus } from "../shared/process/sandbox/index.ts";
import { serviceVersion } from "../shared/version.ts";
import type { KeyCache } from "./auth/cache.ts";
import { registerKeyFunctions } from "./auth/functions.ts";
import { buildOpenApi } from "./openapi.ts";
import type { HttpRouter } from "./router.ts";

const noInput = z.strictObject({});
const functionsInput = z.strictObject({
  prefix: z.string().max(256, "prefix must be at most 256 characters").optional(),
});

const healthAnswer = z.object({
  status: z.literal("ok"),
  version: z.string(),
  workers: z.number(),
  uptime: z.number().describe("Seconds since the process started"),
  sandbox: z
    .object({
      mode: z.enum(["on", "off", "unavailable", "starting"]),
      reason: z.string().optional(),
      limits: z
        .enum(["run", "process"])
        .optional()
        .describe(
          "When on: whether memory and process limits hold for all of a run's processes together (a control group per run) or for each process only",
        ),
      limitsReason: z.string().optional().describe("Why limits hold per process only"),
      cpu: z
        .enum(["weighted", "unweighted"])
        .optional()
        .describe(
          "When on: whether all runs together weigh less than the service on the CPU (a cpu control group of the runs, AGENTOS_SANDBOX_CPU_WEIGHT) or each run as much as the service",
        ),
      cpuReason: z.string().optional().describe("Why runs' CPU is not weighted"),
    })
    .describe(
      "Whether agents' programs run confined: on; off (the operator's AGENTOS_SANDBOX=off); unavailable (programs are refused, reason says what to install); starting (not probed yet)",
    ),
});
const functionList = z.object({
  functions: z.array(
    z.object({
      id: z.string(),
      description: z.string(),
      worker: z.string(),
      inputSchema: z.unknown().describe("JSON Schema of the function's input, or null"),
      internal: z.literal(true).optional().describe("Admin keys only: the service's own plumbing"),
    }),
  ),
  count: z.number(),
});

const whoAmI = z.object({
  kind: z.enum(["admin", "realm"]),
  keyId: z.string(),
  realmId: z.string().optional().describe("A realm key's realm"),
});

const workerList = z.object({
  workers: z.array(
    z.object({
      name: z.string(),
      description: z.string().optional(),
      runtime: z.string().describe("node for in-process workers; a remote worker's own"),
      isolation: z.string().nullable(),
      status: z.enum(["available", "connected"]).describe("connected: a remote iii worker"),
      connected_at_ms: z.number(),
      id: z.string().optional(),
      version: z.string().optional(),
      os: z.string().optional(),
      pid: z.number().optional(),
      ip_address: z.string().optional(),
      active_invocations: z.number().optional(),
      function_count: z.number(),
    }),
  ),
  count: z.number(),
});

/** The front door's own functions: health, OpenAPI and API key management. */
export function registerHttpFunctions(
  engine: Engine,
  router: HttpRouter,
  keyCache: KeyCache,
  dataDir: string,
): void {
  const worker = engine.worker("api", "HTTP front door: health, OpenAPI, API keys");

  worker.registerFunction(
    {
      id: "api::health",
      description: "Service health: status, version, worker count, uptime",
      input: noInput,
      output: healthAnswer,
    },
    () => ({
      status: "ok" as const,
      version: serviceVersion,
      workers: engine.workerCount(),
      uptime: process.uptime(),
      sandbox: sandboxStatus(dataDir) ?? { mode: "starting" as const },
    }),
  );
  worker.registerTrigger({ type: "http", function_id: "api::health", config: { api_path: "/api/health" } });

  worker.registerFunction(
    {
      id: "api::openapi",
      description: "OpenAPI 3.1 document of every HTTP route",
      input: noInput,
      output: z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) }),
    },
    () => buildOpenApi(engine.functions, router.routes(), serviceVersion),
  );
  worker.registerTrigger({
    type: "http",
    function_id: "api::openapi",
    config: { api_path: "/api/openapi.json" },
  });

  worker.registerFunction(
    {
      id: "api::functions",
      description:
        "The functions the caller may call (as workflow steps, or grant as agent tools): {functions, count}",
      input: functionsInput,
      output: functionList,
    },
    ({ prefix }, ctx) => {
      const privileged = isPrivileged(ctx.auth);
      const realmId = ctx.auth.kind === "realm" ? ctx.auth.realmId : undefined;
      const functions = engine.functions
        .list()
        .filter((fn) => !fn.id.startsWith("engine::") && (!prefix || fn.id.startsWith(prefix)))
        .filter(
          (fn) => privileged || (isStepCallable(fn.id, fn.metadata) && openToRealm(fn.metadata, realmId)),
        )
        .sort((a, b) => a.id.localeCompare(b.id))
        .map((fn) => ({
          id: fn.id,
          description: fn.description ?? "",
          worker: engine.workerName(fn.worker) ?? fn.id.split("::")[0],
          inputSchema: requestSchema(fn.input) ?? fn.metadata?.request_format ?? null,
          ...(privileged && isInternalFunction(fn.id, fn.metadata) ? { internal: true as const } : {}),
        }));
      return { functions, count: functions.length };
    },
  );
  worker.registerTrigger({
    type: "http",
    function_id: "api::functions",
    config: { api_path: "/api/functions" },
  });

  worker.registerFunction(
    {
      id: "api::whoami",
      description: "Who the API key is: {kind: admin|realm, keyId, realmId?} (the console reads it)",
      input: noInput,
      output: whoAmI,
    },
    (_input, ctx) => {
      const { auth } = ctx;
      if (auth.kind === "realm") return { kind: "realm" as const, keyId: auth.keyId, realmId: auth.realmId };
      if (auth.kind === "admin") return { kind: "admin" as const, keyId: auth.keyId };
      throw new AppError("unauthorized", "GET /api/whoami needs an API key");
    },
  );
  worker.registerTrigger({ type: "http", function_id: "api::whoami", config: { api_path: "/api/whoami" } });

  worker.registerFunction(
    {
      id: "api::workers",
      description:
        "The workers of this node (admin): in-process ones and remote iii workers with their runtime and function count",
      input: noInput,
      output: workerList,
    },
    (_input, ctx) => {
      requireAdmin(ctx);
      const workers = engine.listWorkers();
      return { workers, count: workers.length };
    },
  );
  worker.registerTrigger({ type: "http", function_id: "api::workers", config: { api_path: "/api/workers" } });

  registerKeyFunctions(worker, keyCache);
}
