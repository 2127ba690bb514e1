import FindMyWay from "find-my-way";
import { z } from "zod";
import type { TriggerRecord, TriggerTypeProvider } from "../engine/types.ts";
import { badRequest } from "../shared/errors.ts";

/** The longest path parameter a route matches (ids are at most 256 characters, some encoded). */
export const MAX_PARAM_LENGTH = 1024;

const methods = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
type Method = (typeof methods)[number];

export const httpTriggerConfig = z.strictObject({
  // iii accepts paths without the leading slash; both name the same route.
  api_path: z
    .string()
    .min(1)
    .max(1024)
    .transform((path) => (path.startsWith("/") ? path : `/${path}`)),
  http_method: z
    .string()
    .default("GET")
    .transform((method) => method.toUpperCase())
    .pipe(z.enum(methods)),
  /** Status for a successful reply with a body (201 for creates); an empty reply is always 204. */
  status: z.union([z.literal(200), z.literal(201), z.literal(202)]).optional(),
  /** When the payload's field of this name is true, a successful reply is 202 (work left running). */
  accepted_field: z.string().min(1).max(64).optional(),
  /**
   * true: give the function the raw request envelope {body, rawBody, headers, query_params,
   * path_params, method, path} and expect {status_code, body, headers?} back (signature checks).
   * "iii": iii's request object and response mapping (set for routes registered by iii workers).
   */
  envelope: z.union([z.boolean(), z.literal("iii")]).optional(),
  /**
   * The function answers `{<array_list>: [...], nextCursor}`; the route answers the bare array (lists the
   * specification shows as arrays) with an RFC 8288 `Link: <…?cursor=…>; rel="next"` header while more follow.
   */
  array_list: z.string().min(1).max(64).optional(),
  /**
   * "optional": a route outside /api and /v1 that also accepts an API key (the generic webhook takes a
   * key or a signature): a Bearer key sent is checked (401 when invalid) and becomes the caller.
   */
  api_key: z.literal("optional").optional(),
  /**
   * true: a request with `stream: true` (or `Accept: text/event-stream`) is answered with server-sent
   * events of what the function reports as it works (`ctx.progress`), then its result.
   */
  progress_stream: z.boolean().optional(),
  /** An envelope route whose success is not JSON: its media type, for the OpenAPI document. */
  answers: z.literal("text/event-stream").optional(),
  /** iii: called with the request first; the route answers 422 when it returns exactly false. */
  condition_function_id: z.string().min(1).max(256).optional(),
  /** iii: called in order before the handler; each may answer the request itself. */
  middleware_function_ids: z.array(z.string().min(1).max(256)).max(16).optional(),
});
export type HttpTriggerConfig = z.infer<typeof httpTriggerConfig>;

export interface RouteTarget {
  functionId: string;
  template: string;
  method: Method;
  config: HttpTriggerConfig;
  /** The binding's metadata, delivered with every call as iii does. */
  metadata?: Record<string, unknown>;
}

export interface RouteMatch {
  target: RouteTarget;
  params: Record<string, string | undefined>;
}

/** The path of a request URL, without the query string. */
function pathOf(url: string): string {
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}

/** The raw path of a request URL: no scheme and host (absolute-form request lines), no query. */
export function requestPath(url: string): string {
  const origin = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i.exec(url);
  return pathOf(origin ? url.slice(origin[0].length) : url) || "/";
}

/** The `http` trigger type: routes can be added and removed at any time, static paths beat parameters. */
export class HttpRouter implements TriggerTypeProvider {
  readonly id = "http";
  readonly description = "Runs the function for HTTP requests to {api_path} with {http_method}";
  // Path parameters up to MAX_PARAM_LENGTH characters (find-my-way's default, 100, is shorter than ids
  // the API takes: a session id of 192 had no route to read it back).
  private readonly router = FindMyWay({
    ignoreTrailingSlash: true,
    ignoreDuplicateSlashes: true,
    maxParamLength: MAX_PARAM_LENGTH,
  });
  private readonly targets = new Map<string, RouteTarget>();

  register(record: TriggerRecord): void {
    const parsed = httpTriggerConfig.safeParse(record.config);
    if (!parsed.success) {
      throw badRequest(`http trigger for ${record.function_id}: ${parsed.error.issues[0]?.message}`);
    }
    const config = parsed.data;
    const target: RouteTarget = {
      functionId: record.function_id,
      template: config.api_path,
      method: config.http_method,
      config,
      metadata: record.metadata,
    };
    try {
      this.router.on(config.http_method, config.api_path, () => undefined, target);
    } catch (error) {
      throw badRequest(`http trigger ${config.http_method} ${config.api_path}: ${(error as Error).message}`);
    }
    this.targets.set(record.id, target);
  }

  unregister(record: TriggerRecord): void {
    const target = this.targets.get(record.id);
    if (!target) return;
    this.router.off(target.method, target.template);
    this.targets.delete(record.id);
  }

  /** find-my-way rebuilds its tree at each off(): removing n routes of n one by one took 0.45 s at shutdown. */
  unregisterMany(records: TriggerRecord[]): void {
    for (const record of records) this.targets.delete(record.id);
    this.router.reset();
    for (const target of this.targets.values())
      this.router.on(target.method, target.template, () => undefined, target);
  }

  find(method: string, path: string): RouteMatch | null {
    const lookup = method === "HEAD" ? "GET" : method;
    if (!(methods as readonly string[]).includes(lookup)) return null;
    const found = this.router.find(lookup as Method, path);
    if (!found) return null;
    return { target: found.store as RouteTarget, params: found.params };
  }

  routes(): RouteTarget[] {
    return [...this.targets.values()];
  }
}
