import type { FastifyReply, FastifyRequest } from "fastify";
import type { Engine } from "../engine/engine.ts";
import type { Principal } from "../engine/types.ts";
import { AppError } from "../shared/errors.ts";
import { isJsonObject, type JsonObject } from "../shared/json-object.ts";
import { securityHeaders } from "./headers.ts";
import type { OutputCheck } from "./output-check.ts";
import type { RouteMatch } from "./router.ts";

export interface RouteCallOptions {
  auth: Principal;
  timeoutMs: number;
  checkOutput?: OutputCheck;
}

/** Response headers a worker cannot set: framing is ours, and the security headers are not negotiable. */
const RESERVED_HEADERS = new Set([
  "content-length",
  "transfer-encoding",
  "connection",
  ...Object.keys(securityHeaders).map((name) => name.toLowerCase()),
]);

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** What Node accepts in a header value (RFC 9110 field-value: visible ASCII, space, tab, obs-text). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * Calls a function for a request on a route: the caller's principal, the request id, the route's
 * metadata and the request timeout go with every call (the handler, a condition, middleware).
 */
export function routeCaller(
  engine: Engine,
  match: RouteMatch,
  request: FastifyRequest,
  options: RouteCallOptions,
) {
  return (
    functionId: string,
    payload: unknown,
    progress?: { onProgress: (event: unknown) => void; signal: AbortSignal },
  ) =>
    engine.trigger({
      function_id: functionId,
      payload,
      metadata: match.target.metadata,
      auth: options.auth,
      requestId: request.id,
      timeout_ms: options.timeoutMs,
      ...progress,
    });
}

/**
 * A route registered by an iii worker (reference/iii-protocol.md §9): the function gets iii's request
 * object and answers {status_code, headers, body}. Before it run the route's condition (false → 422)
 * and middleware (which may answer instead). Where iii hangs or guesses, we answer plainly: no result
 * is 204, and a result that is not response-shaped is sent as the JSON body.
 */
export async function callIiiRoute(
  engine: Engine,
  match: RouteMatch,
  request: FastifyRequest,
  reply: FastifyReply,
  options: RouteCallOptions,
): Promise<void> {
  const { target } = match;
  const req = iiiRequest(request, match, options.auth);
  const call = routeCaller(engine, match, request, options);
  const condition = target.config.condition_function_id;
  if (condition && (await call(condition, req)) === false) {
    throw new AppError("unprocessable", "Request condition not met", { reason: "CONDITION_NOT_MET" });
  }
  for (const middleware of target.config.middleware_function_ids ?? []) {
    const { path_params, query_params, headers, method } = req;
    const outcome = await call(middleware, {
      phase: "preHandler",
      request: { path_params, query_params, headers, method },
      context: {},
    });
    if (isJsonObject(outcome) && outcome.action === "respond" && isJsonObject(outcome.response)) {
      sendIiiResponse(reply, outcome.response, middleware);
      return;
    }
  }
  const result = await call(target.functionId, req);
  if (result === undefined || result === null) {
    reply.code(204).send();
    return;
  }
  if (isResponseShaped(result)) {
    sendIiiResponse(reply, result, target.functionId);
    return;
  }
  reply.code(200).type("application/json; charset=utf-8").send(JSON.stringify(result));
}

/**
 * iii reads every object as {status_code, headers, body} and answers `{}` for a plain object or a
 * string. Ours: an object with any of those keys is a response; anything else is the JSON body itself.
 */
function isResponseShaped(result: unknown): result is JsonObject {
  return isJsonObject(result) && ("status_code" in result || "body" in result || "headers" in result);
}

/**
 * iii's request object. On routes that need a key the caller's Authorization header (our API key) is not
 * passed on: the worker sees who called (`caller`), not the secret. On public routes headers pass as
 * sent, since a webhook may bring its own Authorization scheme.
 */
export function iiiRequest(request: FastifyRequest, match: RouteMatch, auth: Principal): JsonObject {
  const headers: JsonObject = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    if (name === "authorization" && auth.kind !== "anonymous") continue;
    headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  const query: JsonObject = {};
  for (const [name, value] of Object.entries((request.query ?? {}) as Record<string, unknown>)) {
    query[name] = Array.isArray(value) ? String(value[value.length - 1]) : String(value);
  }
  const pathParams: JsonObject = {};
  for (const [name, value] of Object.entries(match.params)) if (value !== undefined) pathParams[name] = value;
  const json = String(request.headers["content-type"] ?? "").includes("application/json");
  const { template, method } = match.target;
  return {
    query_params: query,
    path_params: pathParams,
    headers,
    path: template,
    method: request.method,
    body: json ? ((request.body as JsonObject | undefined) ?? null) : null,
    // Ours, not iii's: the exact request text, since iii's byte channel for it is not offered here.
    raw_body: request.rawBody ?? "",
    trigger: { type: "http", path: template, method },
    caller: callerOf(auth),
  };
}

function callerOf(auth: Principal): JsonObject {
  if (auth.kind === "realm") return { kind: "realm", keyId: auth.keyId, realmId: auth.realmId };
  if (auth.kind === "admin") return { kind: "admin", keyId: auth.keyId };
  return { kind: auth.kind };
}

/** iii's buffered response mapping (§9.4 a). */
export function sendIiiResponse(reply: FastifyReply, response: JsonObject, functionId: string): void {
  const status = response.status_code ?? 200;
  // 1xx are interim responses in Node: a final answer must be 200–599.
  if (typeof status !== "number" || !Number.isInteger(status) || status < 200 || status > 599) {
    throw new AppError(
      "internal",
      `Function ${functionId} answered an invalid status_code: ${JSON.stringify(status)}`,
    );
  }
  reply.code(status);
  for (const [name, value] of responseHeaders(response.headers)) {
    // A name or value Node would refuse at write time is dropped here instead of failing the response.
    if (RESERVED_HEADERS.has(name.toLowerCase()) || !HEADER_NAME.test(name) || !HEADER_VALUE.test(value)) {
      continue;
    }
    reply.header(name, value);
  }
  const body = response.body === undefined ? {} : response.body;
  const contentType = reply.getHeader("content-type");
  if (contentType !== undefined) {
    if (typeof body === "string") reply.send(body);
    else if (body === null) reply.send();
    else reply.send(JSON.stringify(body));
    return;
  }
  reply.type("application/json; charset=utf-8").send(JSON.stringify(body));
}

/** Headers as an object {Name: value} or iii's other form, an array of "Name: value" lines. */
function responseHeaders(headers: unknown): Array<[string, string]> {
  if (Array.isArray(headers)) {
    return headers
      .filter((line): line is string => typeof line === "string" && line.includes(":"))
      .map((line) => {
        const at = line.indexOf(":");
        return [line.slice(0, at).trim(), line.slice(at + 1).trim()];
      });
  }
  if (!isJsonObject(headers)) return [];
  return Object.entries(headers)
    .filter(([, value]) => value !== undefined && value !== null)
    .map(([name, value]) => [name, String(value)]);
}
