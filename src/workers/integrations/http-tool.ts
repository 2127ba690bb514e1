import { AppError } from "../../shared/errors.ts";
import { guardedRequest, type NetworkPolicy } from "../../shared/net/guarded-request.ts";
import type { HttpTool } from "./schema.ts";

const MAX_RESPONSE_BYTES = 5_000_000;
const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g;

/** The JSON Schema the model sees for a plain HTTP tool (only its declared arguments, when it declares some). */
export function httpToolSchema(tool: HttpTool): Record<string, unknown> {
  const declared = Object.keys(tool.parameters).length > 0;
  return {
    type: "object",
    properties: tool.parameters,
    required: tool.required,
    additionalProperties: !declared,
  };
}

/** A path segment the URL parser resolves (`.`, `..`, also written `%2e`): an argument must not make one. */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/**
 * The request a call makes: each `{{name}}` of the URL replaced by that argument, URL-encoded (so an
 * argument never changes the host); the other arguments in the query string (GET, HEAD, DELETE) or as
 * a JSON body.
 */
export function httpToolRequest(
  tool: HttpTool,
  args: Record<string, unknown>,
): { url: URL; body?: string; headers: Record<string, string> } {
  const used = new Set<string>();
  const text = tool.url.replace(PLACEHOLDER, (_whole, name: string) => {
    const value = args[name];
    if (value === undefined || value === null)
      throw new AppError("validation", `${name}: required by the URL of ${tool.name}`);
    used.add(name);
    return encodeURIComponent(typeof value === "string" ? value : JSON.stringify(value));
  });
  const path = text.replace(/^[a-z]+:\/\/[^/]*/i, "").split(/[?#]/)[0] ?? "";
  if (used.size > 0 && path.split("/").some((segment) => DOT_SEGMENT.test(segment)))
    throw new AppError(
      "validation",
      `the arguments of ${tool.name} would make a "." or ".." segment of its path`,
    );
  const url = new URL(text);
  const rest = Object.entries(args).filter(([name]) => !used.has(name));
  const undeclared = Object.keys(tool.parameters).length
    ? rest.filter(([name]) => !Object.hasOwn(tool.parameters, name)).map(([name]) => name)
    : [];
  if (undeclared.length > 0)
    throw new AppError("validation", `${undeclared.join(", ")}: not arguments of ${tool.name}`);
  // The URL's own query parameters are the tool's: an argument cannot add a second value to one.
  const fixed = rest.filter(([name]) => url.searchParams.has(name)).map(([name]) => name);
  if (fixed.length > 0)
    throw new AppError("validation", `${fixed.join(", ")}: set by the URL of ${tool.name}, not an argument`);
  const inQuery = ["GET", "HEAD", "DELETE", "OPTIONS"].includes(tool.method);
  if (inQuery) {
    for (const [name, value] of rest)
      url.searchParams.append(name, typeof value === "string" ? value : JSON.stringify(value));
    return { url, headers: {} };
  }
  return {
    url,
    body: JSON.stringify(Object.fromEntries(rest)),
    headers: { "content-type": "application/json" },
  };
}

export async function callHttpTool(
  tool: HttpTool,
  args: Record<string, unknown>,
  secretValues: Record<string, string>,
  policy: NetworkPolicy,
  signal?: AbortSignal,
): Promise<{ status: number; body: unknown }> {
  for (const name of tool.required)
    if (args[name] === undefined) throw new AppError("validation", `${name}: required by ${tool.name}`);
  const request = httpToolRequest(tool, args);
  const response = await guardedRequest(request.url, {
    method: tool.method,
    headers: { ...request.headers, ...tool.headers, ...secretValues },
    body: request.body,
    maxBytes: MAX_RESPONSE_BYTES,
    timeoutMs: tool.timeout_ms,
    policy,
    signal,
  });
  const text = response.body.toString("utf8");
  let body: unknown = text;
  if (String(response.headers["content-type"] ?? "").includes("json")) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  if (response.status >= 400)
    throw new AppError("upstream", `${tool.name} answered HTTP ${response.status}: ${text.slice(0, 500)}`);
  return { status: response.status, body };
}
