import { z } from "zod";
import type { FunctionRegistry } from "../engine/function-registry.ts";
import { isProtectedPath } from "./guard.ts";
import type { RouteTarget } from "./router.ts";

type JsonSchema = Record<string, unknown> & { properties?: Record<string, unknown>; required?: string[] };

const errorResponse = {
  description: "Error",
  content: {
    "application/json": {
      schema: {
        type: "object",
        required: ["error"],
        properties: { error: { type: "string" }, retryAfter: { type: "number" } },
      },
    },
  },
};

/**
 * What any route may answer besides its success (README, HTTP contract): the front door's refusals (key,
 * realm, rate and in-flight limits, body size and type, slow requests) and the functions' own (invalid
 * input, missing resource, conflict, budget, a failed step). 500 is an unexpected failure, never meant.
 */
const ERROR_STATUSES = [400, 401, 402, 403, 404, 408, 409, 413, 415, 422, 429, 431, 500, 503, 504];

/** The OpenAI-compatible routes answer errors in OpenAI's shape. */
const openAiErrorResponse = {
  description: "Error (OpenAI's shape)",
  content: {
    "application/json": {
      schema: {
        type: "object",
        required: ["error"],
        properties: {
          error: {
            type: "object",
            required: ["message"],
            properties: { message: { type: "string" }, type: { type: "string" }, code: {} },
          },
        },
      },
    },
  },
};

function inputSchema(functions: FunctionRegistry, functionId: string): JsonSchema {
  const input = functions.get(functionId)?.input;
  if (!input) return { type: "object" };
  try {
    return z.toJSONSchema(input, { io: "input", unrepresentable: "any" }) as JsonSchema;
  } catch {
    return { type: "object" };
  }
}

function pathParams(template: string): string[] {
  return [...template.matchAll(/:(\w+)/g)].map((match) => match[1]);
}

function operation(functions: FunctionRegistry, route: RouteTarget): Record<string, unknown> {
  const schema = inputSchema(functions, route.functionId);
  const inPath = pathParams(route.template);
  const properties = { ...(schema.properties ?? {}) };
  for (const name of inPath) delete properties[name];
  const required = (schema.required ?? []).filter((name) => !inPath.includes(name));
  const parameters: unknown[] = inPath.map((name) => ({
    name,
    in: "path",
    required: true,
    schema: { type: "string" },
  }));
  const op: Record<string, unknown> = {
    operationId: route.functionId,
    description: functions.get(route.functionId)?.description,
    parameters,
    responses: {
      [String(route.config.status ?? 200)]: { description: "Success" },
      ...(route.config.accepted_field
        ? { "202": { description: `Accepted: ${route.config.accepted_field} was true, the work goes on` } }
        : {}),
      "204": { description: "Success, no content" },
      ...Object.fromEntries(
        ERROR_STATUSES.map((status) => [
          String(status),
          route.template.startsWith("/v1/") ? openAiErrorResponse : errorResponse,
        ]),
      ),
    },
  };
  if (route.method === "GET" || route.method === "DELETE") {
    for (const [name, property] of Object.entries(properties)) {
      parameters.push({ name, in: "query", required: required.includes(name), schema: property });
    }
  } else {
    op.requestBody = {
      content: { "application/json": { schema: { ...schema, properties, required } } },
    };
  }
  if (isProtectedPath(route.template)) op.security = [{ bearerAuth: [] }];
  return op;
}

/** OpenAPI 3.1 built from the http triggers and the zod input schemas of their functions. */
export function buildOpenApi(functions: FunctionRegistry, routes: RouteTarget[], version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of [...routes].sort((a, b) => a.template.localeCompare(b.template))) {
    const path = route.template.replace(/:(\w+)/g, "{$1}");
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operation(functions, route);
  }
  return {
    openapi: "3.1.0",
    info: { title: "AgentOS", version },
    paths,
    components: { securitySchemes: { bearerAuth: { type: "http", scheme: "bearer" } } },
  };
}
