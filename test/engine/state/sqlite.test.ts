import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Engine } from "../../../src/engine/engine.ts";
import { registerStateFunctions } from "../../../src/engine/state/functions.ts";
import { openStateStore } from "../../../src/engine/state/open.ts";
import { SqliteStateStore } from "../../../src/engine/state/sqlite.ts";
import { AppError } from "../../../src/shared/errors.ts";
import { stateStoreContract } from "./contract.ts";

const dir = mkdtempSync(join(tmpdir(), "agentos-state-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let stores = 0;
// A file, not :memory:, so the contract runs on the WAL setup the service uses.
stateStoreContract("sqlite", () => new SqliteStateStore(join(dir, `state-${stores++}.db`)));

describe("openStateStore", () => {
  it("opens the SQLite file in the data dir when no database URL is set", async () => {
    const dataDir = join(dir, "data");
    const store = await openStateStore({ dataDir });
    try {
      expect(store.kind).toBe("sqlite");
      await store.set("s", "k", 1);
      expect(existsSync(join(dataDir, "agentos.db"))).toBe(true);
    } finally {
      await store.close();
    }
  });
});

describe("state::* engine functions", () => {
  const engine = new Engine();
  const store = new SqliteStateStore(":memory:");
  registerStateFunctions(engine, store);
  afterAll(() => store.close());
  const call = (function_id: string, payload: unknown) => engine.trigger({ function_id, payload });

  it("pages state::list with an opaque cursor until nextCursor is null", async () => {
    const keys = ["a", "b/1", "b/2", "b/3", "b/😀", "c"];
    for (const key of keys) await call("state::set", { scope: "s", key, value: key });
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = (await call("state::list", { scope: "s", prefix: "b/", limit: 2, cursor })) as {
        items: Array<{ key: string }>;
        nextCursor: string | null;
      };
      seen.push(...page.items.map((item) => item.key));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(["b/1", "b/2", "b/3", "b/😀"]);
  });

  it("wraps set, get, update and delete", async () => {
    expect(await call("state::set", { scope: "f", key: "k", value: { n: 1 } })).toEqual({
      old_value: null,
      new_value: { n: 1 },
      version: 1,
    });
    expect(await call("state::get", { scope: "f", key: "k", withVersion: true })).toMatchObject({
      value: { n: 1 },
      version: 1,
    });
    const updated = await call("state::update", {
      scope: "f",
      key: "k",
      ops: [
        { type: "increment", path: "n" },
        { type: "append", path: "n", value: 1 },
      ],
    });
    expect(updated).toMatchObject({ old_value: { n: 1 }, new_value: { n: 2 }, version: 2 });
    expect((updated as { errors: Array<{ op_index: number }> }).errors).toEqual([
      expect.objectContaining({ op_index: 1, code: "append.type_mismatch" }),
    ]);
    expect(await call("state::delete", { scope: "f", key: "k" })).toEqual({ n: 2 });
    expect(await call("state::get", { scope: "f", key: "k" })).toBeNull();
  });

  it("maps a stale expectedVersion to a conflict", async () => {
    await call("state::set", { scope: "f", key: "cas", value: 1 });
    const stale = call("state::set", { scope: "f", key: "cas", value: 2, expectedVersion: 0 });
    const error = (await stale.catch((e: unknown) => e)) as AppError;
    expect(error).toBeInstanceOf(AppError);
    expect(error.code).toBe("conflict");
  });

  it.each([
    ["state::get", { scope: "s" }, "key"],
    ["state::get", { scope: "", key: "k" }, "scope"],
    ["state::set", { scope: "s", key: "a\u0000b", value: 1 }, "key"],
    ["state::set", { scope: "s", key: "k" }, "value"],
    ["state::set", { scope: "s", key: "k", value: 1, expectedVersion: -1 }, "expectedVersion"],
    ["state::set", { scope: "s", key: "k", value: 1, extra: true }, "(root)"],
    ["state::delete", { scope: "s", key: "k", expectedVersion: 1.5 }, "expectedVersion"],
    ["state::list", { scope: "s", limit: 0 }, "limit"],
    ["state::list", { scope: "s", limit: 1001 }, "limit"],
    ["state::list", { scope: "s", cursor: "not a cursor!" }, "cursor"],
    ["state::list", { scope: "s", prefix: "a\u0000" }, "prefix"],
    ["state::update", { scope: "s", key: "k", ops: [] }, "ops"],
    ["state::update", { scope: "s", key: "k", ops: [{ type: "increment", path: "n", by: "x" }] }, "ops.0.by"],
  ])("%s rejects %j as a validation error naming %s", async (functionId, payload, field) => {
    const error = await call(functionId, payload).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("validation");
    expect((error as AppError).message.startsWith(`${field}:`)).toBe(true);
  });
});
