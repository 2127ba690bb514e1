import { randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Engine } from "../../../src/engine/engine.ts";
import { registerStateFunctions } from "../../../src/engine/state/functions.ts";
import { SqliteStateStore } from "../../../src/engine/state/sqlite.ts";
import type { Principal } from "../../../src/engine/types.ts";
import type { AuditPage } from "../../../src/workers/security/audit.ts";
import { register as registerSecurity } from "../../../src/workers/security/index.ts";
import { register as registerVault } from "../../../src/workers/vault/index.ts";
import { type StoredSecret, VAULT_SCOPE } from "../../../src/workers/vault/vault.ts";
import { createCapturingLogger, createTestEngine } from "../../helpers/engine.ts";

const admin: Principal = { kind: "admin", keyId: "key-admin" };
const realmKey: Principal = { kind: "realm", keyId: "key-realm", realmId: "realm-a" };
const SECRET = "sk-test-1234567890-very-secret";

let store: SqliteStateStore;
let engines: Engine[];

/** A service over the shared store with its own vault key, as a restart with another key would be. */
function service(key: Buffer): Engine {
  const engine = createTestEngine();
  registerStateFunctions(engine, store);
  registerSecurity(engine.worker("security"));
  registerVault(engine.worker("vault"), { key });
  engines.push(engine);
  return engine;
}

/** The raw record as the state store holds it. */
const stored = async (name: string) =>
  (await store.get(VAULT_SCOPE, name))?.value as StoredSecret | undefined;

let engine: Engine;
const call = (function_id: string, payload: Record<string, unknown>, auth?: Principal) =>
  engine.trigger({ function_id, payload, auth }) as Promise<Record<string, unknown> | null>;

beforeEach(() => {
  store = new SqliteStateStore(":memory:");
  engines = [];
  engine = service(randomBytes(32));
});

afterEach(async () => {
  for (const each of engines) each.shutdown();
  await store.close();
});

describe("vault secrets", () => {
  it("round-trips a secret through set and get", async () => {
    const info = await call("vault::set", { key: "provider:openai:api_key", value: SECRET });
    expect(info).toEqual({
      key: "provider:openai:api_key",
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(await call("vault::get", { key: "provider:openai:api_key" })).toEqual({
      key: "provider:openai:api_key",
      value: SECRET,
    });
  });

  it("returns null for a secret that does not exist", async () => {
    expect(await call("vault::get", { key: "provider:missing:api_key" })).toBeNull();
  });

  it("stores only ciphertext: the raw record holds neither the plaintext nor its base64", async () => {
    await call("vault::set", { key: "channel:slack:signing_secret", value: SECRET });
    const raw = await store.get(VAULT_SCOPE, "channel:slack:signing_secret");
    const text = JSON.stringify(raw);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(Buffer.from(SECRET).toString("base64"));
    expect(Object.keys(raw?.value as object).sort()).toEqual([
      "ciphertext",
      "createdAt",
      "iv",
      "tag",
      "updatedAt",
    ]);
  });

  it("uses a fresh IV for every write, so equal values give different ciphertexts", async () => {
    await call("vault::set", { key: "a", value: SECRET });
    await call("vault::set", { key: "b", value: SECRET });
    expect((await stored("a"))?.iv).not.toBe((await stored("b"))?.iv);
  });

  it("keeps createdAt and moves updatedAt when a secret is overwritten", async () => {
    const first = await call("vault::set", { key: "k", value: "one" });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await call("vault::set", { key: "k", value: "two" });
    expect(second?.createdAt).toBe(first?.createdAt);
    expect(second?.updatedAt).not.toBe(first?.updatedAt);
    expect(await call("vault::get", { key: "k" })).toEqual({ key: "k", value: "two" });
  });

  it("fails with an error naming the vault key when the key is not the one the secret was stored with", async () => {
    await call("vault::set", { key: "provider:openai:api_key", value: SECRET });
    engine = service(randomBytes(32));
    await expect(call("vault::get", { key: "provider:openai:api_key" })).rejects.toThrow(/vault key/);
  });

  it("binds the ciphertext to its name: a record copied under another name does not decrypt", async () => {
    await call("vault::set", { key: "provider:openai:api_key", value: SECRET });
    await store.set(VAULT_SCOPE, "provider:other:api_key", await stored("provider:openai:api_key"));
    await expect(call("vault::get", { key: "provider:other:api_key" })).rejects.toThrow(/Cannot decrypt/);
  });

  it("lists names and timestamps without values, optionally by prefix", async () => {
    await call("vault::set", { key: "provider:openai:api_key", value: SECRET });
    await call("vault::set", { key: "channel:slack:signing_secret", value: SECRET });
    const listed = await call("vault::list", {}, admin);
    expect(JSON.stringify(listed)).not.toContain(SECRET);
    expect(listed?.count).toBe(2);
    expect(listed?.keys).toEqual([
      { key: "channel:slack:signing_secret", createdAt: expect.any(String), updatedAt: expect.any(String) },
      { key: "provider:openai:api_key", createdAt: expect.any(String), updatedAt: expect.any(String) },
    ]);
    expect((await call("vault::list", { prefix: "provider:" }))?.count).toBe(1);
  });

  it("deletes a secret, and reports a missing one as not found", async () => {
    await call("vault::set", { key: "k", value: SECRET });
    expect(await call("vault::delete", { key: "k" })).toBeUndefined();
    expect(await call("vault::get", { key: "k" })).toBeNull();
    await expect(call("vault::delete", { key: "k" })).rejects.toMatchObject({ code: "not_found" });
  });

  it("validates key names: 1-256 characters without whitespace or slash", async () => {
    for (const key of ["", "x".repeat(257), "has space", "a/b"]) {
      await expect(call("vault::set", { key, value: SECRET })).rejects.toMatchObject({ code: "validation" });
    }
    await expect(call("vault::set", { key: "x".repeat(256), value: SECRET })).resolves.toBeTruthy();
  });

  it("refuses a value with a lone surrogate (400) rather than storing another secret than sent", async () => {
    await expect(call("vault::set", { key: "k", value: "\ud800abc" })).rejects.toMatchObject({
      code: "validation",
    });
    expect(await call("vault::get", { key: "k" })).toBeNull();
    // NUL and any well-formed text are values like others.
    await call("vault::set", { key: "k", value: "a\u0000b\u{1F511}" });
    expect(await call("vault::get", { key: "k" })).toEqual({ key: "k", value: "a\u0000b\u{1F511}" });
  });
});

describe("vault access", () => {
  it("refuses every vault function to a realm-bound key", async () => {
    await call("vault::set", { key: "k", value: SECRET });
    for (const [id, payload] of [
      ["vault::get", { key: "k" }],
      ["vault::set", { key: "k", value: "x" }],
      ["vault::list", {}],
      ["vault::delete", { key: "k" }],
    ] as const) {
      await expect(call(id, payload, realmKey)).rejects.toMatchObject({ code: "forbidden" });
    }
    expect(await call("vault::get", { key: "k" })).toEqual({ key: "k", value: SECRET });
  });

  it("allows admin keys and internal calls", async () => {
    await call("vault::set", { key: "k", value: SECRET }, admin);
    expect(await call("vault::get", { key: "k" }, admin)).toEqual({ key: "k", value: SECRET });
    expect(await call("vault::get", { key: "k" })).toEqual({ key: "k", value: SECRET });
  });

  it("routes list, set and delete over HTTP but never get", () => {
    const routes = engine.triggers
      .list()
      .filter((trigger) => trigger.type === "http" && trigger.function_id.startsWith("vault::"))
      .map(({ function_id, config }) => ({ function_id, config }));
    expect(routes).toEqual(
      expect.arrayContaining([
        { function_id: "vault::list", config: { api_path: "/api/vault", http_method: "GET" } },
        { function_id: "vault::set", config: { api_path: "/api/vault", http_method: "POST", status: 201 } },
        { function_id: "vault::delete", config: { api_path: "/api/vault/:key", http_method: "DELETE" } },
      ]),
    );
    expect(routes).toHaveLength(3);
  });
});

describe("vault audit", () => {
  it("records vault_set and vault_delete with the key name and actor, never the value", async () => {
    await call("vault::set", { key: "provider:openai:api_key", value: SECRET }, admin);
    await call("vault::delete", { key: "provider:openai:api_key" }, admin);
    await engine.drain();
    const page = (await call("security::audit_query", { order: "asc" })) as unknown as AuditPage;
    expect(page.entries.map((entry) => [entry.type, entry.detail])).toEqual([
      ["vault_set", { key: "provider:openai:api_key", actor: "admin:key-admin" }],
      ["vault_delete", { key: "provider:openai:api_key", actor: "admin:key-admin" }],
    ]);
    expect(JSON.stringify(page)).not.toContain(SECRET);
  });

  it("still stores the secret when the audit cannot be recorded, and logs a warning", async () => {
    const { logger, entries } = createCapturingLogger();
    const bare = createTestEngine({ logger });
    registerStateFunctions(bare, store);
    registerVault(bare.worker("vault"), { key: randomBytes(32) });
    engines.push(bare);
    await bare.trigger({ function_id: "vault::set", payload: { key: "k", value: SECRET } });
    await bare.drain();
    expect(await bare.trigger({ function_id: "vault::get", payload: { key: "k" } })).toEqual({
      key: "k",
      value: SECRET,
    });
    expect(entries.some((entry) => entry.level === 40 && entry.functionId === "security::audit")).toBe(true);
  });
});
