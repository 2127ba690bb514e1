import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiError, api, apiText, stream } from "../../src/console/web/api.ts";

/**
 * The console's calls with ids from the API in their paths: a "." or ".." segment, which the browser
 * would resolve to another route (with the admin's key and the same method), is never sent.
 */
const fetched: string[] = [];

beforeEach(() => {
  fetched.length = 0;
  vi.stubGlobal("sessionStorage", { getItem: () => "admin-key", setItem: () => {}, removeItem: () => {} });
  vi.stubGlobal("fetch", async (path: string) => {
    fetched.push(path);
    return new Response(JSON.stringify({ ok: true }), { status: 200 });
  });
});

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("the console's API calls", () => {
  it.each([
    "/api/agents/agent-1/memory/.",
    "/api/agents/agent-1/memory/..",
    "/api/agents/agent-1/memory/%2E",
    "/api/agents/agent-1/memory/.%2e",
    "/api/workflows/..?realmId=realm-1",
    "/api/workflows/runs/../cancel",
  ])("refuses %s before anything is sent", async (path) => {
    await expect(api(path, { method: "DELETE" })).rejects.toThrow(ApiError);
    await expect(api(path, { method: "DELETE" })).rejects.toThrow(/"\." or "\.\."/);
    await expect(apiText(path)).rejects.toThrow(ApiError);
    await expect(stream(path).next()).rejects.toThrow(ApiError);
    expect(fetched).toEqual([]);
  });

  it("sends ids with dots in them, and dots in the query", async () => {
    for (const path of [
      "/api/workflows/release.v2..final",
      "/api/agents/a/memory/...",
      "/api/workflows/flow?realmId=..",
    ]) {
      expect(await api(path)).toEqual({ ok: true });
    }
    expect(fetched).toEqual([
      "/api/workflows/release.v2..final",
      "/api/agents/a/memory/...",
      "/api/workflows/flow?realmId=..",
    ]);
  });
});
