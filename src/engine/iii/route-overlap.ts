import type { TriggerRecord } from "../types.ts";

interface Route {
  method: string;
  path: string;
}

/**
 * Why a worker's `http` binding would take requests from another worker's route (an engine route
 * included), or undefined. An exact clash is refused by the router, but not a route that only
 * overlaps: find-my-way prefers a static segment to a parameter and a prefixed parameter to a bare
 * one, so `/api/agents/agent-1` or `/api/agents/agent-:id` would capture requests meant for
 * `/api/agents/:id`. Any overlap is refused, whichever route would win it. So are find-my-way's
 * regular expressions (`:id(^.*$)`, not iii's syntax): one may hold a `/`, which hides its segments.
 */
export function overlappedRoute(
  config: unknown,
  records: TriggerRecord[],
  worker: string,
): string | undefined {
  const route = routeOf(config);
  if (!route) return undefined;
  if (route.path.includes("(")) {
    return `Route ${route.method} ${route.path}: regular expressions are not supported in paths (use :name segments)`;
  }
  const segments = segmentsOf(route.path);
  for (const record of records) {
    if (record.type !== "http" || record.worker === worker) continue;
    const other = routeOf(record.config);
    if (other?.method === route.method && overlaps(segments, segmentsOf(other.path))) {
      return `Route ${route.method} ${route.path} overlaps ${other.method} ${other.path}, a route of another worker`;
    }
  }
  return undefined;
}

/** The binding's method and path as the router reads them; undefined for a config it will refuse anyway. */
function routeOf(config: unknown): Route | undefined {
  const { api_path: path, http_method: method = "GET" } = (config ?? {}) as Record<string, unknown>;
  if (typeof path !== "string" || typeof method !== "string") return undefined;
  return { method: method.toUpperCase(), path: path.startsWith("/") ? path : `/${path}` };
}

/** find-my-way ignores doubled and trailing slashes, so empty segments do not count. */
function segmentsOf(path: string): string[] {
  return path.split("/").filter(Boolean);
}

/** A segment with a parameter (`:id`, `agent-:id`, `:a-:b`, `:id(^re$)`) may match a static one. */
const variable = (segment: string) => segment.includes(":");

/** Could one request path match both routes? A wildcard matches whatever follows it, but not nothing. */
function overlaps(a: string[], b: string[]): boolean {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (x === undefined || y === undefined) return false;
    if (x.includes("*") || y.includes("*")) return true;
    if (x !== y && !variable(x) && !variable(y)) return false;
  }
  return true;
}
