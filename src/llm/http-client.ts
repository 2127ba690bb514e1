import type { IncomingHttpHeaders } from "node:http";
import { Readable } from "node:stream";
import { type Dispatcher, Pool } from "undici";

/**
 * Connections to providers are kept open and reused, by the pass-through and the AI SDK alike: one
 * undici pool per origin. undici's request API costs about a sixth less CPU per call than `node:http`'s
 * client (issue #14: the gateway's plain completions), and a third of what the global `fetch` costs.
 */
const pools = new Map<string, Pool>();

function poolFor(url: URL): Pool {
  let pool = pools.get(url.origin);
  if (!pool) {
    // No timeouts of undici's own (300 s by default): the caller's timer and signal decide, as for
    // every provider call (a slow model may take minutes before its first byte).
    pool = new Pool(url.origin, { connections: 256, headersTimeout: 0, bodyTimeout: 0 });
    pools.set(url.origin, pool);
  }
  return pool;
}

/** A provider's answer once its headers arrived: the body is read as it comes. */
export interface UpstreamResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Readable;
}

/** POSTs `payload` and answers the response once its headers arrived. */
export async function post(
  url: URL,
  headers: Record<string, string>,
  payload: string,
  signal: AbortSignal,
): Promise<UpstreamResponse> {
  const {
    statusCode,
    headers: received,
    body,
  } = await poolFor(url).request({
    path: `${url.pathname}${url.search}`,
    method: "POST",
    headers,
    body: payload,
    signal,
  });
  return { statusCode, headers: received as IncomingHttpHeaders, body };
}

const NO_BODY = new Set([101, 204, 205, 304]);

/**
 * The most bytes of a provider's answer `keepAliveFetch` reads into memory (not an event stream, which
 * is passed on as it comes). A chat answer is its output tokens, at most a few megabytes with images
 * inline; without a bound a broken or hostile provider's endless answer was held whole until the call's
 * deadline (2 GB of answer: 2.2 GB of the service's memory, for one call).
 */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/** A provider's answer past MAX_ANSWER_BYTES: not a network failure, so the SDK does not retry it. */
export class AnswerTooLargeError extends Error {
  constructor(limit: number) {
    super(`the provider's answer is larger than ${limit / (1024 * 1024)} MB`);
    this.name = "AnswerTooLargeError";
  }
}

/**
 * `fetch` for the AI SDK's providers over the same pools: the global fetch (undici's, with WHATWG
 * streams for every body) cost about a tenth of an agent turn's CPU. A JSON answer is read whole and
 * handed over as one buffer; an event stream is passed on as it arrives. Failures look as they do from
 * fetch (the abort reason when aborted, else `TypeError("fetch failed")` with the cause), which is what
 * the SDKs tell network errors by. Anything but a string or byte body goes to the global fetch.
 */
export const keepAliveFetch: typeof fetch = async (input, init) => {
  const body = init?.body;
  const url = new URL(input instanceof Request ? input.url : String(input));
  const simple =
    !(input instanceof Request) &&
    (url.protocol === "http:" || url.protocol === "https:") &&
    (body === undefined || body === null || typeof body === "string" || body instanceof Uint8Array);
  if (!simple) return fetch(input, init);
  const signal = init?.signal ?? undefined;
  try {
    const answer = await poolFor(url).request({
      path: `${url.pathname}${url.search}`,
      method: (init?.method ?? "GET") as Dispatcher.HttpMethod,
      headers: headerRecord(init?.headers),
      body: body ?? undefined,
      signal,
    });
    const options = { status: answer.statusCode, headers: responseHeaders(answer.headers) };
    if (NO_BODY.has(answer.statusCode)) {
      answer.body.resume();
      return new Response(null, options);
    }
    if (String(answer.headers["content-type"] ?? "").includes("text/event-stream")) {
      return new Response(Readable.toWeb(answer.body) as ReadableStream<Uint8Array>, options);
    }
    return new Response(await readBounded(answer.body, MAX_ANSWER_BYTES), options);
  } catch (error) {
    if (error instanceof AnswerTooLargeError) throw error;
    throw signal?.aborted ? signal.reason : new TypeError("fetch failed", { cause: error });
  }
};

/** The whole body, or AnswerTooLargeError (the body destroyed) once it passes `limit` bytes. */
export async function readBounded(body: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      throw new AnswerTooLargeError(limit);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

function headerRecord(headers: RequestInit["headers"]): Record<string, string> {
  if (!headers) return {};
  if (headers instanceof Headers || Array.isArray(headers)) return Object.fromEntries(headers);
  const record: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) record[name] = String(value);
  return record;
}

function responseHeaders(received: Record<string, string | string[] | undefined>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(received)) {
    if (Array.isArray(value)) for (const each of value) headers.append(name, each);
    else if (value !== undefined) headers.append(name, value);
  }
  return headers;
}
