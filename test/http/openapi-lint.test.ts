import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HttpRouter } from "../../src/http/router.ts";
import { json, startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
// biome-ignore lint/suspicious/noExplicitAny: the document is read as arbitrary JSON
let document: any;

beforeAll(async () => {
  server = await startTestServer();
  document = await json(await server.request("/api/openapi.json"));
});
afterAll(() => server.close());

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** Every operation of the document as `METHOD /path` with its operationId. */
function operations(): Array<{ route: string; operationId: string | undefined }> {
  return Object.entries(document.paths as Record<string, Record<string, { operationId?: string }>>).flatMap(
    ([path, item]) =>
      Object.entries(item)
        .filter(([method]) => METHODS.includes(method))
        .map(([method, operation]) => ({
          route: `${method.toUpperCase()} ${path}`,
          operationId: operation.operationId,
        })),
  );
}

/** The routes the http triggers registered, in the document's spelling (`{id}` for `:id`). */
function triggerRoutes(): string[] {
  const router = server.service.engine.triggers.listTypes().find((type) => type.id === "http") as HttpRouter;
  return router.routes().map((route) => `${route.method} ${route.template.replace(/:(\w+)/g, "{$1}")}`);
}

/**
 * The routes Fastify itself serves (outside the triggers), read from its printed route tree (a segment
 * per line, nested by indentation); HEAD is implied by GET. The catch-all that dispatches the triggers
 * and the console's static files are not API.
 */
function serverRoutes(): string[] {
  const tree = server.service.http.printRoutes({ commonPrefix: false });
  const prefixes: string[] = [];
  const routes: string[] = [];
  for (const line of tree.split("\n")) {
    const parsed = /^([\s│├└─]*)(\S+) \(([A-Z, ]+)\)$/.exec(line);
    if (!parsed) continue;
    const [, indent = "", segment = "", methods = ""] = parsed;
    const depth = indent.length / 4;
    const parent = depth > 1 ? (prefixes[depth - 1] ?? "") : "";
    const path = parent === "" ? segment : `${parent.replace(/\/$/, "")}/${segment.replace(/^\//, "")}`;
    prefixes[depth] = path;
    if (path === "/" || path === "/*" || path === "/console" || path.startsWith("/console/")) continue;
    for (const method of methods.split(", ")) if (method !== "HEAD") routes.push(`${method} ${path}`);
  }
  return routes;
}

describe("the OpenAPI document, linted", () => {
  it("gives every operation an operationId used by no other operation", () => {
    const ids = operations().map((operation) => operation.operationId);
    expect(ids.filter((id) => id === undefined)).toEqual([]);
    const repeated = ids.filter((id, index) => ids.indexOf(id) !== index);
    expect(repeated).toEqual([]);
  });

  it("tells apart the routes of one function: a webhook's GET and POST, or its two paths", () => {
    for (const platform of ["whatsapp", "messenger"]) {
      const item = document.paths[`/webhook/${platform}`];
      expect(item.get.operationId).toBe(`channel::${platform}::webhook::get`);
      expect(item.post.operationId).toBe(`channel::${platform}::webhook::post`);
    }
    const matrix = document.paths["/webhook/matrix/_matrix/app/v1/transactions/{txnId}"].put;
    expect(matrix.operationId).not.toBe(document.paths["/webhook/matrix"].post.operationId);
    // A function with a single route keeps its id as the operationId.
    expect(document.paths["/api/health"].get.operationId).toBe("api::health");
  });

  it("documents every route the service registers: its triggers' and its own (/healthz, /metrics)", () => {
    const documented = new Set(operations().map((operation) => operation.route));
    const own = serverRoutes();
    expect(own).toEqual(expect.arrayContaining(["GET /healthz", "GET /metrics"]));
    const missing = [...triggerRoutes(), ...own].filter((route) => !documented.has(route));
    expect(missing).toEqual([]);
  });

  it("documents /healthz and /metrics as they answer", async () => {
    const health = await server.request("/healthz", { key: null });
    const schema = document.paths["/healthz"].get.responses["200"].content["application/json"].schema;
    expect(schema.required).toEqual(["status"]);
    expect(await json(health)).toEqual({ status: schema.properties.status.const });
    expect(document.paths["/healthz"].get.security).toEqual([]);

    const metrics = await server.request("/metrics");
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get("content-type")).toMatch(/^text\/plain/);
    const operation = document.paths["/metrics"].get;
    expect(Object.keys(operation.responses["200"].content)).toEqual(["text/plain"]);
    expect(operation.security).toEqual([{ bearerAuth: [] }]);
    expect((await server.request("/metrics", { key: null })).status).toBe(401);
    expect(operation.responses["401"]).toBeDefined();
  });
});
