import { serverSentEvents } from "../shared/sse.ts";
import { keyFor, serviceAddress, unreachable } from "./service-call.ts";

/** The API's refusal: its own message and its status (a 404 lets a name be tried where an id was not). */
export class ApiError extends Error {
  readonly status: number;
  constructor(message: string, status: number) {
    super(`${message} (HTTP ${status})`);
    this.status = status;
  }
}

/**
 * The running service's HTTP API as the daily commands use it: URL from AGENTOS_URL (else
 * AGENTOS_PORT on loopback), key from AGENTOS_API_KEY (else `<data dir>/admin.key`). Failures become
 * one-line errors saying what went wrong: unreachable service, or the API's own message and status.
 */
export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await send(method, path, body);
  const text = await response.text();
  const parsed = text ? (JSON.parse(text) as T & { error?: unknown }) : (null as T);
  if (!response.ok) {
    const message = (parsed as { error?: unknown } | null)?.error;
    throw new ApiError(typeof message === "string" ? message : text || "no answer", response.status);
  }
  return parsed;
}

/** A request whose answer is read as server-sent events: each `{event, data}` as it arrives. */
export async function* apiEvents(
  method: string,
  path: string,
  body: unknown,
): AsyncGenerator<{ event: string; data: unknown }> {
  const response = await send(method, path, body, { accept: "text/event-stream" });
  if (!response.ok || !response.headers.get("content-type")?.includes("text/event-stream")) {
    const text = await response.text();
    let message = text;
    try {
      message = String((JSON.parse(text) as { error?: unknown }).error ?? text);
    } catch {
      // Not JSON: the text itself.
    }
    throw new ApiError(message, response.status);
  }
  for await (const { event, data } of serverSentEvents(response.body as AsyncIterable<Uint8Array>)) {
    yield { event, data: JSON.parse(data) };
  }
}

async function send(method: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const address = serviceAddress();
  const key = keyFor(address.url);
  try {
    return await fetch(new URL(path, address.url), {
      method,
      headers: {
        ...headers,
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    throw unreachable(error, address);
  }
}

/** `--json`: the answer as JSON; else the human form. */
export function output(json: boolean | undefined, value: unknown, human: () => string): void {
  process.stdout.write(`${json ? JSON.stringify(value, null, 2) : human()}\n`);
}

/** Rows as a plain text table: a header line, then one line per row, columns padded to fit. */
export function table(columns: string[], rows: Array<Array<unknown>>): string {
  if (rows.length === 0) return "(none)";
  const cells = rows.map((row) =>
    row.map((cell) => (cell === undefined || cell === null ? "" : String(cell))),
  );
  const widths = columns.map((column, i) =>
    Math.max(column.length, ...cells.map((row) => (row[i] ?? "").length)),
  );
  const line = (row: string[]) =>
    row
      .map((cell, i) => cell.padEnd(widths[i] as number))
      .join("  ")
      .trimEnd();
  return [line(columns.map((column) => column.toUpperCase())), ...cells.map(line)].join("\n");
}
