import { createHash } from "node:crypto";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { bootstrapAdminKey } from "../../../src/http/auth/bootstrap.ts";
import {
  createKey,
  hashDerivedKeyId,
  hashKey,
  KEYS_SCOPE,
  revokeKey,
  storeKey,
  verifyKey,
} from "../../../src/http/auth/keys.ts";
import { realmKey } from "../../helpers/control-plane.ts";
import { createStateEngine, stateEachTest } from "../../helpers/engine.ts";
import { json, startTestServer, TEST_ADMIN_KEY, type TestServer } from "../../helpers/server.ts";

/** What an id derived from the key would be: the first 16 hex digits of its SHA-256. */
const derivedFrom = (key: string) => `key_${createHash("sha256").update(key).digest("hex").slice(0, 16)}`;

describe("key ids", () => {
  let harness: ReturnType<typeof createStateEngine>;
  beforeEach(() => {
    harness = createStateEngine();
  });
  afterEach(() => harness.close());

  it("are random, so an id shown anywhere is no offline test of a key the operator chose", async () => {
    const chosen = "zq-chosen-key-0123456789";
    const stored = await storeKey(harness.state, chosen, { name: "AGENTOS_API_KEY", role: "admin" });
    expect(stored.id).toMatch(/^key_[0-9a-f]{16}$/);
    expect(stored.id).not.toBe(derivedFrom(chosen));
    const created = await createKey(harness.state, {});
    expect(created.id).not.toBe(derivedFrom(created.key));
    expect(await verifyKey(harness.state, chosen)).toEqual({ kind: "admin", keyId: stored.id });
  });

  it("fails closed: a realm key record that lost its realm authenticates as nobody, never as an admin", async () => {
    const key = "realm-key-without-realm-0123456789";
    const hash = hashKey(key);
    await harness.state.set(KEYS_SCOPE, hash, {
      id: "key_0123456789abcdef",
      hash,
      name: "broken",
      role: "realm",
      hint: "realm-ke",
      createdAt: "2025-01-01T00:00:00.000Z",
    });
    expect(await verifyKey(harness.state, key)).toBeNull();
  });

  it("revokes by id, also a key stored when ids were derived from the hash", async () => {
    const created = await createKey(harness.state, {});
    await revokeKey(harness.state, created.id);
    expect(await verifyKey(harness.state, created.key)).toBeNull();

    const legacy = "legacy-key-0123456789abcdef";
    const hash = hashKey(legacy);
    await harness.state.set(KEYS_SCOPE, hash, {
      id: hashDerivedKeyId(hash),
      hash,
      name: "old",
      role: "admin",
      hint: "(set by the operator)",
      createdAt: "2025-01-01T00:00:00.000Z",
    });
    await revokeKey(harness.state, hashDerivedKeyId(hash));
    expect(await verifyKey(harness.state, legacy)).toBeNull();
    await expect(revokeKey(harness.state, hashDerivedKeyId(hash))).rejects.toMatchObject({ status: 404 });
  });

  it("gives AGENTOS_API_KEY stored with a hash-derived id a random one at start, keeping the rest", async () => {
    const apiKey = "zq-chosen-key-0123456789";
    const hash = hashKey(apiKey);
    const old = {
      id: hashDerivedKeyId(hash),
      hash,
      name: "AGENTOS_API_KEY",
      role: "admin",
      hint: "(set by the operator)",
      createdAt: "2025-01-01T00:00:00.000Z",
    };
    await harness.state.set(KEYS_SCOPE, hash, old);
    await bootstrapAdminKey(harness.state, { apiKey, dataDir: "/nonexistent" });
    const now = await harness.state.get<typeof old>(KEYS_SCOPE, hash);
    expect(now?.id).toMatch(/^key_[0-9a-f]{16}$/);
    expect(now?.id).not.toBe(old.id);
    expect({ ...now, id: old.id }).toEqual(old);
    // A later start leaves the new id alone.
    await bootstrapAdminKey(harness.state, { apiKey, dataDir: "/nonexistent" });
    expect((await harness.state.get<typeof old>(KEYS_SCOPE, hash))?.id).toBe(now?.id);
  });
});

describe("AGENTOS_API_KEY", () => {
  const state = stateEachTest();

  it("ends the key of its earlier value when it changes, and leaves every other key alone", async () => {
    const first = "first-operator-key-0123456789";
    const second = "second-operator-key-0123456789";
    await bootstrapAdminKey(state, { apiKey: first, dataDir: "/nonexistent" });
    const other = await createKey(state, { name: "ci" });
    expect(await verifyKey(state, first)).toMatchObject({ kind: "admin" });
    // Rotated: the service starts with the new value.
    await bootstrapAdminKey(state, { apiKey: second, dataDir: "/nonexistent" });
    expect(await verifyKey(state, first)).toBeNull();
    expect(await verifyKey(state, second)).toMatchObject({ kind: "admin" });
    expect(await verifyKey(state, other.key)).toMatchObject({ kind: "admin" });
    // A start with the same value changes nothing.
    await bootstrapAdminKey(state, { apiKey: second, dataDir: "/nonexistent" });
    expect(await verifyKey(state, second)).toMatchObject({ kind: "admin" });
  });
});

describe("key ids over HTTP", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it("shows a realm key the admin key's id (a workflow's author) without anything of the key", async () => {
    const created = await server.request("/api/workflows", {
      method: "POST",
      json: { name: "ops", steps: [{ name: "s", functionId: "agent::chat", promptTemplate: "x" }] },
    });
    expect(created.status).toBe(201);
    const tenant = await realmKey(server, "realm-default");
    const read = await server.request(`/api/workflows/${(await json(created)).id}`, { key: tenant });
    expect(read.status).toBe(200);
    const { author } = await json(read);
    expect(author).toMatchObject({ kind: "admin", keyId: expect.stringMatching(/^key_[0-9a-f]{16}$/) });
    expect(author.keyId).not.toBe(derivedFrom(TEST_ADMIN_KEY));
  });
});
