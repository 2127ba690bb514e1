import { describe, expect, it } from "vitest";
import type { TriggerRecord } from "../../src/engine/types.ts";
import { HttpRouter } from "../../src/http/router.ts";

describe("HttpRouter", () => {
  const route = (id: string, method: string, path: string): TriggerRecord => ({
    id,
    type: "http",
    function_id: `f::${id}`,
    worker: "w",
    config: { api_path: path, http_method: method },
  });

  it("withdraws many routes at once and still finds the others", () => {
    const router = new HttpRouter();
    const records = [
      route("1", "GET", "/api/a"),
      route("2", "GET", "/api/a/:id"),
      route("3", "POST", "/api/b"),
      route("4", "GET", "/api/c/:x/d"),
    ];
    for (const record of records) router.register(record);
    router.unregisterMany([records[0], records[2]]);
    expect(router.find("GET", "/api/a")).toBeNull();
    expect(router.find("POST", "/api/b")).toBeNull();
    expect(router.find("GET", "/api/a/7")?.params).toEqual({ id: "7" });
    expect(router.find("GET", "/api/c/y/d")?.target.functionId).toBe("f::4");
    expect(router.routes().map((target) => target.functionId)).toEqual(["f::2", "f::4"]);
    router.unregisterMany([records[1], records[3]]);
    expect(router.routes()).toEqual([]);
    expect(router.find("GET", "/api/a/7")).toBeNull();
  });
});
