import { describe, expect, it } from "vitest";
import { overlappedRoute } from "../../../src/engine/iii/route-overlap.ts";
import type { TriggerRecord } from "../../../src/engine/types.ts";

const route = (worker: string, api_path: string, http_method?: string): TriggerRecord => ({
  id: `${worker}:${http_method ?? "GET"} ${api_path}`,
  type: "http",
  function_id: `${worker}::fn`,
  worker,
  config: { api_path, ...(http_method ? { http_method } : {}) },
});

const engineRoutes = [route("agents", "/api/agents/:id"), route("hooks", "api/hooks/*", "post")];
const overlap = (api_path: string, http_method?: string) =>
  overlappedRoute({ api_path, http_method }, engineRoutes, "worker-1");

describe("overlappedRoute", () => {
  it("refuses find-my-way's regular expressions, whose slashes would hide the segments they take", () => {
    for (const path of ["/api/agents/:id(^.*$)", "/api/agents/:id(^.*/?.*$)", "/fresh/:n(\\d+)"]) {
      expect(overlap(path)).toMatch(/regular expressions are not supported in paths/);
    }
  });

  it("names the route that a static, prefixed or multi parameter segment would take requests from", () => {
    for (const path of ["/api/agents/agent-1", "api/agents/agent-:id", "/api/agents/:a-:b"]) {
      expect(overlap(path)).toMatch(/overlaps GET \/api\/agents\/:id, a route of another worker$/);
    }
  });

  it("reads paths as find-my-way does: doubled and trailing slashes ignored, methods in any case", () => {
    expect(overlap("//api/agents//x/")).toBeDefined();
    expect(overlap("/api/hooks/github/push", "Post")).toMatch(/overlaps POST \/api\/hooks\/\*/);
    // A wildcard matches something, never nothing.
    expect(overlap("/api/hooks", "POST")).toBeUndefined();
  });

  it("lets through routes no request could share: other methods, lengths or static segments, and own routes", () => {
    expect(overlap("/api/agents/agent-1", "DELETE")).toBeUndefined();
    expect(overlap("/api/agents/:id/extra")).toBeUndefined();
    expect(overlap("/api/gadgets/:id")).toBeUndefined();
    expect(overlappedRoute({ api_path: "/api/agents/agent-1" }, engineRoutes, "agents")).toBeUndefined();
    expect(overlappedRoute({ api_path: 42 }, engineRoutes, "worker-1")).toBeUndefined();
  });
});
