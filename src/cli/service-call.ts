import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config/env.ts";

export function serviceUrl(): string {
  return process.env.AGENTOS_URL ?? `http://127.0.0.1:${process.env.AGENTOS_PORT ?? 3111}`;
}

export function defaultKey(): string | undefined {
  if (process.env.AGENTOS_API_KEY) return process.env.AGENTOS_API_KEY;
  try {
    return readFileSync(join(loadConfig().dataDir, "admin.key"), "utf8").trim();
  } catch {
    return undefined;
  }
}

/**
 * A function of the service: through the running service's HTTP API when one answers (so what it
 * loads is live at once), else in this process against the same storage (without background work).
 */
export async function callService<T>(
  request: { method: "GET" | "POST"; path: string; body?: unknown },
  functionId: string,
  payload: Record<string, unknown>,
): Promise<T> {
  const key = defaultKey();
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
    if (code !== "ECONNREFUSED")
      throw new Error(`cannot reach the service at ${serviceUrl()}: ${code ?? (error as Error).message}`);
  }
  if (response) {
    const body = (await response.json().catch(() => ({}))) as T & { error?: string };
    if (!response.ok) throw new Error(body.error ?? `HTTP ${response.status}`);
    return body;
  }
  // Loaded only here: the whole service takes seconds to import, and most commands only speak HTTP.
  const { createAgentOS } = await import("../app.ts");
  const service = await createAgentOS(loadConfig(), { bootstrapAdminKey: false, background: false });
  try {
    return (await service.engine.trigger({ function_id: functionId, payload })) as T;
  } finally {
    await service.close();
  }
}
