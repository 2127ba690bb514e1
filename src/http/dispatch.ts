import { Readable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Engine } from "../engine/engine.ts";
import { closingFirst } from "../shared/closing-first.ts";
import { isJsonObject, type JsonObject } from "../shared/json-object.ts";
import { openProgress, type ProgressItem } from "../shared/progress-stream.ts";
import { SSE_HEADERS } from "../shared/sse.ts";
import { inSpan } from "../shared/tracing.ts";
import { toErrorReply } from "./errors.ts";
import { callIiiRoute, type RouteCallOptions, routeCaller } from "./iii-route.ts";
import type { OutputCheck } from "./output-check.ts";
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

export function callRoute(
  engine: Engine,
  match: RouteMatch,
  request: FastifyRequest,
  reply: FastifyReply,
  options: RouteCallOptions,
): Promise<void> {
  const name = `${request.method} ${match.target.template}`;
  const attributes = { "http.request.method": request.method, "http.route": match.target.template };
  return inSpan(name, attributes, async (span) => {
    await answerRoute(engine, match, request, reply, options);
    span?.setAttribute("http.response.status_code", reply.statusCode);
  });
}

async function answerRoute(
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
  if (target.config.progress_stream && wantsStream(request, payload)) {
    const call = routeCaller(engine, match, request, options);
    const items = await openProgress((onProgress, signal) =>
      call(target.functionId, { ...payload, stream: true }, { onProgress, signal }),
    );
    reply
      .code(200)
      .headers(SSE_HEADERS)
      // A client that leaves between events stops the call at once (the events' own return aborts it).
      .send(
        Readable.from(
          closingFirst(serverSentEvents(items), () => void items.return(undefined).catch(() => undefined)),
        ),
      );
    return;
  }
  const result = await routeCaller(engine, match, request, options)(target.functionId, payload);
  if (envelope && isJsonObject(result) && typeof result.status_code === "number") {
    if (options.checkOutput && result.status_code < 300)
      checkEnvelopeBody(options.checkOutput, target, result);
    sendEnvelope(reply, result);
    return;
  }
  options.checkOutput?.(target.functionId, result);
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

function wantsStream(request: FastifyRequest, payload: JsonObject): boolean {
  if (payload.stream === true) return true;
  return payload.stream === undefined && String(request.headers.accept ?? "").includes("text/event-stream");
}

/**
 * Each progress event as `event: <its type>`, then `event: done` with the result, or `event: error`
 * with the error as a JSON reply would carry it (the status is already sent).
 */
async function* serverSentEvents(items: AsyncGenerator<ProgressItem<unknown>>): AsyncGenerator<string> {
  for await (const item of items) {
    if (item.kind === "event") {
      const type = (item.event as { type?: unknown } | null)?.type;
      yield `event: ${typeof type === "string" ? type : "progress"}\ndata: ${JSON.stringify(item.event)}\n\n`;
    } else if (item.kind === "result") {
      yield `event: done\ndata: ${JSON.stringify(item.result ?? null)}\n\n`;
    } else {
      const { status, body } = toErrorReply(item.error);
      yield `event: error\ndata: ${JSON.stringify({ ...body, status })}\n\n`;
    }
  }
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

/** A body passed through as text (a provider's answer) is checked as the JSON it is, if it is JSON. */
function checkEnvelopeBody(check: OutputCheck, target: RouteMatch["target"], result: JsonObject): void {
  const body = result.body;
  if (isAsyncIterable(body)) return;
  if (typeof body !== "string") {
    check(target.functionId, body);
    return;
  }
  try {
    check(target.functionId, JSON.parse(body));
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
  }
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
