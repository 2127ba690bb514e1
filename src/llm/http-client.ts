import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { Readable } from "node:stream";

/** Connections to providers are kept open and reused, by the pass-through and the AI SDK alike. */
export const keepAliveAgents = {
  "http:": new http.Agent({ keepAlive: true, maxSockets: 256 }),
  "https:": new https.Agent({ keepAlive: true, maxSockets: 256 }),
};

/** POSTs `payload` and answers the response once its headers arrived. */
export function post(
  url: URL,
  headers: Record<string, string>,
  payload: string,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const outgoing = requestFor(url, { method: "POST", headers, signal }, resolve);
    outgoing.on("error", reject);
    outgoing.end(payload);
  });
}

function requestFor(
  url: URL,
  options: http.RequestOptions,
  onResponse: (response: IncomingMessage) => void,
): http.ClientRequest {
  const secure = url.protocol === "https:";
  const agent = keepAliveAgents[secure ? "https:" : "http:"];
  return (secure ? https : http).request(url, { ...options, agent }, onResponse);
}

const NO_BODY = new Set([101, 204, 205, 304]);

/**
 * `fetch` for the AI SDK's providers over node:http with the keep-alive agents: the global fetch
 * (undici, with WHATWG streams for every body) cost about a tenth of an agent turn's CPU. A JSON answer
 * is read whole and handed over as one buffer; an event stream is passed on as it arrives. Failures
 * look as they do from fetch (the abort reason when aborted, else `TypeError("fetch failed")` with the
 * cause), which is what the SDKs tell network errors by. Anything but a string or byte body goes to
 * the global fetch.
 */
export const keepAliveFetch: typeof fetch = (input, init) => {
  const body = init?.body;
  const url = new URL(input instanceof Request ? input.url : String(input));
  const simple =
    !(input instanceof Request) &&
    (url.protocol === "http:" || url.protocol === "https:") &&
    (body === undefined || body === null || typeof body === "string" || body instanceof Uint8Array);
  if (!simple) return fetch(input, init);
  const signal = init?.signal ?? undefined;
  return new Promise<Response>((resolve, reject) => {
    const fail = (error: unknown) =>
      reject(signal?.aborted ? signal.reason : new TypeError("fetch failed", { cause: error }));
    const outgoing = requestFor(
      url,
      { method: init?.method ?? "GET", headers: headerRecord(init?.headers), signal },
      (response) => {
        const status = response.statusCode ?? 500;
        const options = { status, statusText: response.statusMessage, headers: responseHeaders(response) };
        if (NO_BODY.has(status)) {
          response.resume();
          resolve(new Response(null, options));
        } else if (String(response.headers["content-type"] ?? "").includes("text/event-stream")) {
          resolve(new Response(Readable.toWeb(response) as ReadableStream<Uint8Array>, options));
        } else {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () => resolve(new Response(Buffer.concat(chunks), options)));
          response.on("error", fail);
        }
      },
    );
    outgoing.on("error", fail);
    outgoing.end(body ?? undefined);
  });
};

function headerRecord(headers: RequestInit["headers"]): Record<string, string> {
  if (!headers) return {};
  if (headers instanceof Headers || Array.isArray(headers)) return Object.fromEntries(headers);
  const record: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) record[name] = String(value);
  return record;
}

function responseHeaders(response: IncomingMessage): Headers {
  const headers = new Headers();
  const raw = response.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
  return headers;
}
