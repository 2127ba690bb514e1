import { z } from "zod";
import type { Engine } from "../engine/engine.ts";
import { serviceVersion } from "../shared/version.ts";
import type { KeyCache } from "./auth/cache.ts";
import { registerKeyFunctions } from "./auth/functions.ts";
import { buildOpenApi } from "./openapi.ts";
import type { HttpRouter } from "./router.ts";

const noInput = z.strictObject({});

/** The front door's own functions: health, OpenAPI and API key management. */
export function registerHttpFunctions(engine: Engine, router: HttpRouter, keyCache: KeyCache): void {
  const worker = engine.worker("api", "HTTP front door: health, OpenAPI, API keys");

  worker.registerFunction(
    {
      id: "api::health",
      description: "Service health: status, version, worker count, uptime",
      input: noInput,
    },
    () => ({
      status: "ok",
      version: serviceVersion,
      workers: engine.workerCount(),
      uptime: process.uptime(),
    }),
  );
  worker.registerTrigger({ type: "http", function_id: "api::health", config: { api_path: "/api/health" } });

  worker.registerFunction(
    { id: "api::openapi", description: "OpenAPI 3.1 document of every HTTP route", input: noInput },
    () => buildOpenApi(engine.functions, router.routes(), serviceVersion),
  );
  worker.registerTrigger({
    type: "http",
    function_id: "api::openapi",
    config: { api_path: "/api/openapi.json" },
  });

  registerKeyFunctions(worker, keyCache);
}
