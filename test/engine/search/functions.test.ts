import { afterAll, describe, expect, it } from "vitest";
import { Engine } from "../../../src/engine/engine.ts";
import { searchClient } from "../../../src/engine/search/client.ts";
import { registerSearchFunctions } from "../../../src/engine/search/functions.ts";
import { SqliteTextIndex } from "../../../src/engine/search/sqlite.ts";
import { AppError } from "../../../src/shared/errors.ts";

describe("search::* engine functions", () => {
  const engine = new Engine();
  const index = new SqliteTextIndex(":memory:");
  registerSearchFunctions(engine, index);
  afterAll(() => index.close());
  const call = (function_id: string, payload: unknown) => engine.trigger({ function_id, payload });
  const search = searchClient((request) => engine.trigger(request));

  it("puts, queries, deletes and deletes a scope", async () => {
    const put = (await call("search::put", { index: "notes", scope: "s", id: "a", text: "alpha beta" })) as {
      id: string;
      createdAt: string;
    };
    expect(put.id).toBe("a");
    expect(Number.isNaN(Date.parse(put.createdAt))).toBe(false);
    await search.put("notes", "s", "b", {
      text: "beta gamma",
      data: { n: 2 },
      createdAt: "2025-01-01T00:00:00Z",
    });
    expect(await call("search::query", { index: "notes", scope: "s", query: "gamma" })).toEqual({
      results: [{ id: "b", data: { n: 2 }, score: expect.any(Number), createdAt: "2025-01-01T00:00:00Z" }],
    });
    expect((await search.query("notes", "s", "alpha")).results).toMatchObject([{ id: "a", data: null }]);
    expect((await search.query("notes", "s", "beta", { limit: 1 })).results).toHaveLength(1);
    expect(await search.delete("notes", "s", "a")).toEqual({ deleted: true });
    expect(await search.delete("notes", "s", "a")).toEqual({ deleted: false });
    expect(await search.deleteScope("notes", "s")).toEqual({ deleted: 1 });
    expect(await search.query("notes", "s", "beta")).toEqual({ results: [] });
  });

  it("puts several documents of a scope in one call, and refuses a repeated id naming it", async () => {
    const put = await call("search::put_many", {
      index: "many",
      scope: "s",
      docs: [
        { id: "x", text: "green tea", data: { n: 1 } },
        { id: "y", text: "black tea" },
      ],
    });
    expect((put as { docs: Array<{ id: string }> }).docs.map((doc) => doc.id)).toEqual(["x", "y"]);
    const found = (await call("search::query", { index: "many", scope: "s", query: "tea" })) as {
      results: Array<{ id: string }>;
    };
    expect(found.results.map((hit) => hit.id).sort()).toEqual(["x", "y"]);
    await expect(
      call("search::put_many", {
        index: "many",
        scope: "s",
        docs: [
          { id: "z", text: "a" },
          { id: "z", text: "b" },
        ],
      }),
    ).rejects.toThrow(/repeat an id/);
  });

  it("returns ten results unless asked for another limit", async () => {
    for (let i = 0; i < 12; i++) await search.put("notes", "many", `d${i}`, { text: `entry ${i}` });
    expect((await search.query("notes", "many", "entry")).results).toHaveLength(10);
    expect((await search.query("notes", "many", "entry", { limit: 200 })).results).toHaveLength(12);
  });

  it("refuses a text over 256 KiB of UTF-8, whatever its length in characters", async () => {
    const error = await search.put("i", "s", "a", { text: "é".repeat(140_000) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).message).toBe("text: larger than 262144 bytes");
  });

  it.each([
    ["search::put", { index: "i", scope: "s", id: "a" }, "text"],
    ["search::put", { index: "", scope: "s", id: "a", text: "t" }, "index"],
    ["search::put", { index: "i", scope: "s\u0000", id: "a", text: "t" }, "scope"],
    ["search::put", { index: "i", scope: "s", id: "", text: "t" }, "id"],
    ["search::put", { index: "i", scope: "s", id: "a", text: "t\u0000" }, "text"],
    ["search::put", { index: "i", scope: "s", id: "a", text: "t", createdAt: "yesterday" }, "createdAt"],
    ["search::put", { index: "i", scope: "s", id: "a", text: "t", extra: 1 }, "(root)"],
    ["search::delete", { index: "i", scope: "s" }, "id"],
    ["search::delete_scope", { index: "i" }, "scope"],
    ["search::query", { index: "i", scope: "s", query: "" }, "query"],
    ["search::query", { index: "i", scope: "s", query: "q", limit: 0 }, "limit"],
    ["search::query", { index: "i", scope: "s", query: "q", limit: 201 }, "limit"],
    ["search::query", { index: "i", scope: "s", query: "q", recencyHalfLifeMs: 0 }, "recencyHalfLifeMs"],
  ])("%s rejects %j as a validation error naming %s", async (functionId, payload, field) => {
    const error = await call(functionId, payload).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("validation");
    expect((error as AppError).message.startsWith(`${field}:`)).toBe(true);
  });
});
