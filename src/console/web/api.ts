import { eventParser, type ServerEvent } from "./lib/sse.ts";

const KEY = "agentos.apiKey";

/** The key lives in session storage: it is gone when the tab closes. */
export const apiKey = {
  get: (): string | null => sessionStorage.getItem(KEY),
  set: (key: string) => sessionStorage.setItem(KEY, key),
  clear: () => sessionStorage.removeItem(KEY),
};

/** A refusal of the API, with its status and the API's own message. */
export class ApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

function headers(json: boolean): Record<string, string> {
  const key = apiKey.get();
  return {
    ...(key ? { authorization: `Bearer ${key}` } : {}),
    ...(json ? { "content-type": "application/json" } : {}),
  };
}

async function failure(response: Response): Promise<ApiError> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as { error?: string | { message?: string } };
    const message = typeof body.error === "string" ? body.error : body.error?.message;
    return new ApiError(response.status, message ?? text);
  } catch {
    return new ApiError(response.status, text || response.statusText);
  }
}

/**
 * A path the API is called at, as written. Ids go in as encodeURIComponent leaves them, which keeps
 * `.` and `..` (and fetch resolves %2e like a dot): such a segment would send the admin's key and the
 * method to another route. A realm key may name a workflow "."; a memory "." would make its Forget
 * DELETE .../memory (all of them), a ".." DELETE the agent.
 */
function checked(path: string): string {
  const [route = ""] = path.split("?");
  if (route.split("/").some((segment) => /^(\.|%2e){1,2}$/i.test(segment))) {
    throw new ApiError(400, `The console does not call ${route}: an id of "." or ".." names no single thing`);
  }
  return path;
}

/** One call of the HTTP API; the answer's JSON, null for 204; a refusal throws ApiError. */
export async function api<T>(path: string, options: { method?: string; body?: unknown } = {}): Promise<T> {
  const response = await fetch(checked(path), {
    method: options.method ?? (options.body === undefined ? "GET" : "POST"),
    headers: headers(options.body !== undefined),
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  if (!response.ok) throw await failure(response);
  if (response.status === 204) return null as T;
  return (await response.json()) as T;
}

/** The answer's text as it is (Prometheus metrics). */
export async function apiText(path: string): Promise<string> {
  const response = await fetch(checked(path), { headers: headers(false) });
  if (!response.ok) throw await failure(response);
  return response.text();
}

/**
 * Server-sent events of a call as they come (an agent's streamed turn, a run's progress). A refusal
 * before the stream opens throws ApiError, like any call.
 */
export async function* stream(
  path: string,
  options: { method?: string; body?: unknown; signal?: AbortSignal } = {},
): AsyncGenerator<ServerEvent> {
  const response = await fetch(checked(path), {
    method: options.method ?? (options.body === undefined ? "GET" : "POST"),
    headers: { ...headers(options.body !== undefined), accept: "text/event-stream" },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: options.signal,
  });
  if (!response.ok || !response.body) throw await failure(response);
  const parse = eventParser();
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    yield* parse(value);
  }
}
