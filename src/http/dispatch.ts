import { Readable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Engine } from "../engine/engine.ts";
import { isJsonObject, type JsonObject } from "../shared/json-object.ts";
import { callIiiRoute, type RouteCallOptions, routeCaller } from "./iii-route.ts";
import { type RouteMatch, requestPath } from "./router.ts";

/** One plain payload: query, then body, then path params (params cannot be overridden by the body). */
export function plainPayload(request: FastifyRequest, params: RouteMatch["params"]): JsonObject {
  const body = request.body;
  const fromBody = body === undefined ? {} : isJsonObject(body) ? body : { body };
  return { ...(request.query as JsonObject), ...fromBody, ...definedParams(params) };
}

function definedParams(params: RouteMatch["params"]): JsonObject {
  const result: JsonObject = {};
  for (const [name, value] of Object.entries(params)) if (value !== undefined) result[name] = value;
  return result;
}

/** The raw request envelope for functions that need headers and the exact body (signatures, iii workers). */
export function envelopePayload(request: FastifyRequest, params: RouteMatch["params"]): JsonObject {
  return {
    body: request.body ?? null,
    rawBody: request.rawBody ?? "",
    headers: request.headers,
    query_params: request.query,
    path_params: definedParams(params),
    method: request.method,
    path: requestPath(request.url),
  };
}

export async function callRoute(
  engine: Engine,
  match: RouteMatch,
  request: FastifyRequest,
  reply: FastifyReply,
  options: RouteCallOptions,
): Promise<void> {
  const { target } = match;
  if (target.config.envelope === "iii") return callIiiRoute(engine, match, request, reply, options);
  const envelope = target.config.envelope === true;
  const payload = envelope ? envelopePayload(request, match.params) : plainPayload(request, match.params);
  const result = await routeCaller(engine, match, request, options)(target.functionId, payload);
  if (envelope && isJsonObject(result) && typeof result.status_code === "number") {
    sendEnvelope(reply, result);
    return;
  }
  if (result === undefined || result === null) {
    reply.code(204).send();
    return;
  }
  const listField = target.config.array_list;
  if (listField && isJsonObject(result) && Array.isArray(result[listField])) {
    if (typeof result.nextCursor === "string") {
      reply.header("Link", `<${nextPageUrl(request, result.nextCursor)}>; rel="next"`);
    }
    reply.code(200).type("application/json; charset=utf-8").send(JSON.stringify(result[listField]));
    return;
  }
  const accepted = target.config.accepted_field && payload[target.config.accepted_field] === true;
  reply
    .code(accepted ? 202 : (target.config.status ?? 200))
    .type("application/json; charset=utf-8")
    .send(JSON.stringify(result));
}

/** The request's own path and query, with `cursor` set to the next page's. */
function nextPageUrl(request: FastifyRequest, cursor: string): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(request.query as Record<string, unknown>)) {
    if (name !== "cursor" && typeof value === "string") query.set(name, value);
  }
  query.set("cursor", cursor);
  return `${requestPath(request.url)}?${query}`;
}

function sendEnvelope(reply: FastifyReply, result: JsonObject): void {
  const status = result.status_code as number;
  reply.code(status >= 100 && status <= 599 ? status : 500);
  if (isJsonObject(result.headers)) {
    for (const [name, value] of Object.entries(result.headers)) reply.header(name, String(value));
  }
  const body = result.body;
  if (body === undefined || body === null) {
    reply.send();
  } else if (isAsyncIterable(body)) {
    // In-process streams (server-sent events): each chunk is written as it comes.
    reply.send(Readable.from(body));
  } else if (typeof body === "string") {
    if (!reply.hasHeader("content-type")) reply.type("text/plain; charset=utf-8");
    reply.send(body);
  } else {
    reply.type("application/json; charset=utf-8").send(JSON.stringify(body));
  }
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === "function";
}
