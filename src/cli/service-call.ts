import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config/env.ts";
import { call, type FunctionId, type InputOf, type OutputOf } from "../engine/call.ts";
import { isJsonObject } from "../shared/json-object.ts";
import { isLocalUrl, listenerUids, urlPort } from "./listener-owner.ts";

const DEFAULT_PORT = 3111;

/**
 * Where the running service is, and what said so: AGENTOS_URL (a service elsewhere, or behind a proxy),
 * else AGENTOS_PORT on this host (what `agentos serve` listens on), else the default port.
 */
export function serviceAddress(): { url: string; from: string } {
  const { AGENTOS_URL: url, AGENTOS_PORT: port } = process.env;
  if (url) {
    if (!URL.canParse(url)) throw new Error(`AGENTOS_URL is not a URL: ${url} (e.g. http://127.0.0.1:3111)`);
    return { url, from: "AGENTOS_URL" };
  }
  if (port) return { url: `http://127.0.0.1:${port}`, from: "AGENTOS_PORT" };
  return {
    url: `http://127.0.0.1:${DEFAULT_PORT}`,
    from: "the default; AGENTOS_URL and AGENTOS_PORT are unset",
  };
}

export function serviceUrl(): string {
  return serviceAddress().url;
}

/**
 * A request that reached no service: the address tried, where it came from, and how to change it. A CLI
 * in another shell than `agentos serve` does not see the port that shell set, so the fix must be named.
 */
export function unreachable(error: unknown, address = serviceAddress()): Error {
  // fetch reports every network failure as "fetch failed"; the reason (ECONNREFUSED, ...) is the cause.
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const reason = cause?.code ?? cause?.message ?? (error as Error).message;
  return new Error(
    `cannot reach the service at ${address.url} (${address.from}): ${reason}. Start it with \`agentos serve\`, or tell the CLI where it runs: AGENTOS_URL=http://<host>:<port> (or AGENTOS_PORT=<port> for this host)`,
  );
}

/**
 * The key to send to `url`: AGENTOS_API_KEY, else `<data dir>/admin.key`. Any user may listen on the
 * service's port while it is down, so the file's key goes to a port on this host only when what
 * listens there is the key file's owner's (or root's): the service that wrote it, not another user.
 */
export function keyFor(url: string): string | undefined {
  if (process.env.AGENTOS_API_KEY) return process.env.AGENTOS_API_KEY;
  const file = join(loadConfig().dataDir, "admin.key");
  let key: string;
  let owner: number;
  try {
    key = readFileSync(file, "utf8").trim();
    owner = statSync(file).uid;
  } catch {
    return undefined;
  }
  assertListenerOwns(new URL(url), owner, file);
  return key;
}

function assertListenerOwns(url: URL, owner: number, file: string): void {
  if (!isLocalUrl(url)) return;
  const port = urlPort(url);
  const stranger = listenerUids(port).find((uid) => uid !== owner && uid !== 0);
  if (stranger === undefined) return;
  throw new Error(
    `refusing to send the admin key in ${file} to ${url.origin}: port ${port} is held by uid ${stranger}, not by the key file's owner (uid ${owner}). Another user may be posing as the service: find it with \`ss -ltnp\`, or give the key in AGENTOS_API_KEY if that service is yours`,
  );
}

/**
 * A function of the service: through the running service's HTTP API when one answers (so what it
 * loads is live at once), else in this process against the same storage (without background work).
 */
export async function callService<Id extends FunctionId>(
  request: { method: "GET" | "POST"; path: string; body?: unknown },
  functionId: Id,
  payload: InputOf<Id>,
): Promise<OutputOf<Id>> {
  const key = keyFor(serviceUrl());
  let response: Response | undefined;
  try {
    response = await fetch(new URL(request.path, serviceUrl()), {
      method: request.method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(request.body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: AbortSignal.timeout(120_000),
    });
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code;
    if (code !== "ECONNREFUSED") throw unreachable(error);
  }
  if (response) {
    const body: unknown = await response.json().catch(() => ({}));
    if (!response.ok) {
      throw new Error(
        isJsonObject(body) && typeof body.error === "string" ? body.error : `HTTP ${response.status}`,
      );
    }
    // The function's route answers its output as JSON.
    return body as OutputOf<Id>;
  }
  // Loaded only here: the whole service takes seconds to import, and most commands only speak HTTP.
  const { createAgentOS } = await import("../app.ts");
  const service = await createAgentOS(loadConfig(), { bootstrapAdminKey: false, background: false });
  try {
    return await call((request) => service.engine.trigger(request), functionId, payload);
  } finally {
    await service.close();
  }
}
