import { z } from "zod";
import type { FunctionRegistry } from "../engine/function-registry.ts";
import { isProtectedPath } from "./guard.ts";
import { hoistDefinitions } from "./openapi-refs.ts";
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

export function jsonSchemaOf(schema: z.ZodType | undefined, io: "input" | "output"): JsonSchema | undefined {
  if (!schema) return undefined;
  try {
    const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
      io,
      unrepresentable: "any",
    }) as JsonSchema;
    return rest;
  } catch {
    return undefined;
  }
}

/** The request's schema: the function's input, or for an envelope function the body it documents. */
function inputSchema(functions: FunctionRegistry, route: RouteTarget): JsonSchema {
  const fn = functions.get(route.functionId);
  const documented = route.config.envelope ? fn?.body : fn?.input;
  return jsonSchemaOf(documented, "input") ?? { type: "object" };
}

/** A function documented to answer nothing: its route answers 204. */
export const isNoContent = (output: z.ZodType) => output instanceof z.ZodVoid;

function successResponses(functions: FunctionRegistry, route: RouteTarget): Record<string, unknown> {
  const noContent = { "204": { description: "Success, no content" } };
  const declared = functions.get(route.functionId)?.output;
  if (declared && isNoContent(declared)) return noContent;
  const output = answerSchema(functions, route);
  const content = successContent(route, output);
  return {
    [String(route.config.status ?? 200)]: { description: "Success", ...content },
    ...(route.config.accepted_field
      ? {
          "202": {
            description: `Accepted: ${route.config.accepted_field} was true, the work goes on`,
            ...content,
          },
        }
      : {}),
    // Without a documented output (webhooks, the service's own text routes) any success may be empty.
    ...(declared || route.config.answers ? {} : noContent),
  };
}

const EVENTS = { "text/event-stream": { schema: { type: "string", description: "Server-sent events" } } };

/** A success's media types: JSON as documented, or events (always, or when the request asks to stream). */
function successContent(route: RouteTarget, output: JsonSchema | undefined): Record<string, unknown> {
  if (route.config.answers === "text/event-stream") return { content: EVENTS };
  if (!output) return {};
  const json = { "application/json": { schema: output } };
  return { content: route.config.progress_stream ? { ...json, ...EVENTS } : json };
}

/** The success answer's schema: the function's output, or for a bare-array list route its list field. */
function answerSchema(functions: FunctionRegistry, route: RouteTarget): JsonSchema | undefined {
  const output = jsonSchemaOf(functions.get(route.functionId)?.output, "output");
  const listField = route.config.array_list;
  if (!output || !listField) return output;
  return (output.properties?.[listField] as JsonSchema | undefined) ?? output;
}

/** The domain a route belongs to, as a tag: its function's namespace (`agent::get` → agent). */
const tagOf = (functionId: string) => functionId.split("::")[0] as string;

function pathParams(template: string): string[] {
  return [...template.matchAll(/:(\w+)/g)].map((match) => match[1]);
}

function operation(functions: FunctionRegistry, route: RouteTarget): Record<string, unknown> {
  const schema = inputSchema(functions, route);
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
    tags: [tagOf(route.functionId)],
    description: functions.get(route.functionId)?.description,
    parameters,
    responses: {
      ...successResponses(functions, route),
      ...Object.fromEntries(
        ERROR_STATUSES.map((status) => [
          String(status),
          { $ref: `#/components/responses/${route.template.startsWith("/v1/") ? "OpenAiError" : "Error"}` },
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
      required: required.length > 0,
      content: { "application/json": { schema: { ...schema, properties, required } } },
    };
  }
  if (isProtectedPath(route.template)) op.security = [{ bearerAuth: [] }];
  return op;
}

const frontDoorErrors = () =>
  Object.fromEntries(
    ERROR_STATUSES.map((status) => [String(status), { $ref: "#/components/responses/Error" }]),
  );

/**
 * The routes the server answers itself rather than through an http trigger (server.ts): /healthz for
 * load balancers, /metrics for Prometheus. Written by hand, since no function documents them.
 */
const SERVICE_PATHS: Record<string, Record<string, Record<string, unknown>>> = {
  "/healthz": {
    get: {
      operationId: "healthz",
      tags: ["api"],
      description:
        "Liveness for load balancers: no key, no rate limit, no in-flight slot (/api/health is the spec's, with a key)",
      security: [],
      responses: {
        "200": {
          description: "Success",
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: ["status"],
                properties: { status: { type: "string", const: "ok" } },
                additionalProperties: false,
              },
            },
          },
        },
        // It answers 200 whatever it is sent, but the front door may refuse the request first (431, 414…).
        ...frontDoorErrors(),
      },
    },
  },
  "/metrics": {
    get: {
      operationId: "metrics",
      tags: ["api"],
      description: "Prometheus text exposition of the service's metrics; requires an admin key",
      security: [{ bearerAuth: [] }],
      responses: {
        "200": {
          description: "Success",
          content: { "text/plain": { schema: { type: "string", description: "Prometheus text format" } } },
        },
        ...frontDoorErrors(),
      },
    },
  },
};

/**
 * Each operation's id: its function's id, which the console's answer types are keyed by. A function
 * bound to several routes (a webhook's GET verification and POST delivery) gets the method appended to
 * each, since OpenAPI requires operationIds to be unique.
 */
function operationIds(routes: RouteTarget[]): Map<RouteTarget, string> {
  const uses = new Map<string, number>();
  for (const route of routes) uses.set(route.functionId, (uses.get(route.functionId) ?? 0) + 1);
  const ids = new Map<RouteTarget, string>();
  const taken = new Set<string>();
  for (const route of routes) {
    let id = route.functionId;
    if ((uses.get(id) ?? 0) > 1) id = `${id}::${route.method.toLowerCase()}`;
    // The same function on two paths with one method: number them in path order.
    for (let n = 2; taken.has(id); n++) id = `${route.functionId}::${route.method.toLowerCase()}::${n}`;
    taken.add(id);
    ids.set(route, id);
  }
  return ids;
}

/** OpenAPI 3.1 built from the http triggers and the zod input schemas of their functions. */
export function buildOpenApi(functions: FunctionRegistry, routes: RouteTarget[], version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  const sorted = [...routes].sort((a, b) => a.template.localeCompare(b.template));
  const ids = operationIds(sorted);
  for (const route of sorted) {
    const path = route.template.replace(/:(\w+)/g, "{$1}");
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = { ...operation(functions, route), operationId: ids.get(route) };
  }
  const schemas = hoistDefinitions(paths);
  Object.assign(paths, SERVICE_PATHS);
  const tags = [...new Set([...routes.map((route) => tagOf(route.functionId)), "api"])].sort();
  return {
    openapi: "3.1.0",
    info: { title: "AgentOS", version },
    tags: tags.map((name) => ({ name })),
    paths,
    components: {
      schemas,
      responses: { Error: errorResponse, OpenAiError: openAiErrorResponse },
      securitySchemes: { bearerAuth: { type: "http", scheme: "bearer" } },
    },
  };
}
