import { z } from "zod";
import { isPrivileged } from "../shared/access.ts";
import { openToRealm } from "../shared/function-realms.ts";
import { type Engine, functionNotFound } from "./engine.ts";
import { isDiscoverable } from "./function-registry.ts";
import { TELEMETRY_FUNCTION, telemetryEvent } from "./telemetry.ts";
import type { PubSubBus } from "./trigger-types/subscribe.ts";

const publishInput = z.strictObject({
  topic: z.string().min(1, "topic must not be empty").max(256),
  data: z.unknown(),
});

const functionsListInput = z.strictObject({
  prefix: z.string().max(256).optional(),
  include_internal: z.boolean().optional(),
});

const noInput = z.strictObject({});

const functionsInfoInput = z.strictObject({ function_id: z.string().min(1).max(256) });

const metadataField = z.record(z.string(), z.unknown()).optional();

const functionsListOutput = z.object({
  functions: z.array(
    z.object({
      function_id: z.string(),
      worker_name: z.string(),
      description: z.string().optional(),
      metadata: metadataField,
    }),
  ),
});

const functionsInfoOutput = z.object({
  function_id: z.string(),
  worker_name: z.string(),
  description: z.string().optional(),
  metadata: metadataField,
  /** The input as JSON Schema; absent when the function takes any input. */
  request_schema: z.record(z.string(), z.unknown()).optional(),
});

const schemas = new WeakMap<z.ZodType, Record<string, unknown> | undefined>();

/**
 * A function's input as JSON Schema (what an LLM tool definition needs); absent when it has none.
 * Converted once per schema: agents ask for their tools' schemas on every turn.
 */
export function requestSchema(input: z.ZodType | undefined): Record<string, unknown> | undefined {
  if (!input) return undefined;
  if (schemas.has(input)) return schemas.get(input);
  let schema: Record<string, unknown> | undefined;
  try {
    schema = z.toJSONSchema(input, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  } catch {
    schema = undefined;
  }
  schemas.set(input, schema);
  return schema;
}

/** The engine's own functions: publish, engine::functions::list|ids|info, engine::workers::list. */
export function registerEngineBuiltins(engine: Engine, bus: PubSubBus): void {
  const worker = engine.worker("engine", "The function bus: pub/sub and discovery");

  worker.registerFunction(
    {
      id: "publish",
      description: "Publish {data} to every subscriber of {topic}",
      input: publishInput,
      output: z.void(),
    },
    async ({ topic, data }) => {
      await bus.publish(topic, data);
      return undefined;
    },
  );

  worker.registerFunction(
    {
      id: TELEMETRY_FUNCTION,
      description: "Tell this process's observers (metrics, logs) about work done (see telemetry.ts)",
      input: telemetryEvent,
      metadata: { internal: true },
    },
    (event) => {
      engine.observe(event);
      return undefined;
    },
  );

  worker.registerFunction(
    {
      id: "engine::functions::list",
      description: "List registered functions",
      input: functionsListInput,
      output: functionsListOutput,
    },
    ({ prefix, include_internal }) => ({
      functions: engine.functions
        .list()
        .filter((fn) => (prefix ? fn.id.startsWith(prefix) : true))
        .filter((fn) => include_internal || isDiscoverable(fn))
        .map((fn) => ({
          function_id: fn.id,
          // A remote worker that has not said its name yet is known by its functions' group, as in iii.
          worker_name: engine.workerName(fn.worker) ?? fn.id.split("::")[0],
          description: fn.description,
          metadata: fn.metadata,
        })),
    }),
  );

  worker.registerFunction(
    {
      id: "engine::functions::ids",
      description: "The ids engine::functions::list names, sorted: {ids}",
      input: noInput,
      output: z.object({ ids: z.array(z.string()).readonly() }),
    },
    () => ({ ids: engine.functions.publicIds() }),
  );

  worker.registerFunction(
    {
      id: "engine::functions::info",
      description: "One function: {function_id, worker_name, description, metadata, request_schema}",
      input: functionsInfoInput,
      output: functionsInfoOutput,
    },
    ({ function_id }, ctx) => {
      const fn = engine.functions.get(function_id);
      // A function open to other realms alone is as unknown to a realm's key as one that does not exist,
      // as listings hide it: else a workflow's write told which other realms' integrations exist.
      const realm = ctx.auth.kind === "realm" ? ctx.auth.realmId : undefined;
      if (!fn || (!isPrivileged(ctx.auth) && !openToRealm(fn.metadata, realm))) {
        throw functionNotFound(function_id);
      }
      return {
        function_id,
        worker_name: engine.workerName(fn.worker) ?? fn.id.split("::")[0],
        description: fn.description,
        metadata: fn.metadata,
        request_schema: requestSchema(fn.input),
      };
    },
  );

  worker.registerFunction(
    { id: "engine::workers::list", description: "List connected workers", input: noInput },
    () => ({ workers: engine.listWorkers() }),
  );
}
