import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CliResult,
  makeDataDir,
  removeDir,
  runCli,
  type ServeProcess,
  startServe,
} from "../helpers/process.ts";

const ADMIN_KEY = "cli-keys-admin-key-0123456789abcdef";

interface CreatedKey {
  key: string;
  id: string;
  name: string;
  role: "admin" | "realm";
  realmId?: string;
  hint: string;
}

let dataDir: string;
let server: ServeProcess;

/** The CLI works on the same SQLite file as the running server, as an operator on that host would. */
function agentos(...args: string[]): Promise<CliResult> {
  return runCli(args, { AGENTOS_DATA_DIR: dataDir, AGENTOS_LOG_LEVEL: "warn" });
}

async function createWithCli(...args: string[]): Promise<CreatedKey> {
  const result = await agentos("keys", "create", ...args);
  expect(result.code).toBe(0);
  expect(result.stderr).toContain("shown only now");
  return JSON.parse(result.stdout) as CreatedKey;
}

function healthStatus(key: string): Promise<number> {
  return server.request("/api/health", { key }).then((response) => response.status);
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

beforeAll(async () => {
  dataDir = makeDataDir();
  server = await startServe({ dataDir, env: { AGENTOS_API_KEY: ADMIN_KEY } });
});

afterAll(async () => {
  await server?.stop();
  removeDir(dataDir);
});

describe("agentos keys create", () => {
  it("creates an admin key, prints it once as JSON, and a running server accepts it at once", async () => {
    const created = await createWithCli();
    expect(created).toMatchObject({ role: "admin" });
    expect(created.key).toMatch(/^aos_[A-Za-z0-9_-]{43}$/);
    expect(created.id).toMatch(/^key_[0-9a-f]{16}$/);
    expect(created).not.toHaveProperty("hash");
    expect(created).not.toHaveProperty("realmId");

    expect(await healthStatus(created.key)).toBe(200);
    expect((await server.request("/api/keys", { key: created.key })).status).toBe(200);
  });

  it("with --realm and --name creates a realm-bound key that is not an admin key", async () => {
    const created = await createWithCli("--realm", "realm-default", "--name", "x");
    expect(created).toMatchObject({ role: "realm", realmId: "realm-default", name: "x" });
    expect(created.key).toMatch(/^aos_/);
    expect(created.id).toMatch(/^key_[0-9a-f]{16}$/);

    expect(await healthStatus(created.key)).toBe(200);
    expect((await server.request("/api/keys", { key: created.key })).status).toBe(403);
  });
});

describe("agentos keys list", () => {
  it("lists every key by id, name and role but never prints a key or its hash", async () => {
    const admin = await createWithCli("--name", "listed-admin");
    const realm = await createWithCli("--realm", "realm-default", "--name", "listed-realm");

    const result = await agentos("keys", "list", "--json");
    expect(result.code).toBe(0);
    const listed = JSON.parse(result.stdout) as { keys: Array<Record<string, unknown>> };
    expect(listed.keys).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: admin.id, name: "listed-admin", role: "admin" }),
        expect.objectContaining({
          id: realm.id,
          name: "listed-realm",
          role: "realm",
          realmId: "realm-default",
        }),
        expect.objectContaining({ name: "AGENTOS_API_KEY", role: "admin" }),
      ]),
    );
    for (const entry of listed.keys) {
      expect(entry).not.toHaveProperty("hash");
      expect(entry).not.toHaveProperty("key");
    }
    const output = result.stdout + result.stderr;
    for (const key of [admin.key, realm.key, ADMIN_KEY]) {
      expect(output).not.toContain(key);
      expect(output).not.toContain(sha256(key));
    }
    // A 64-hex-digit string anywhere would be a hash.
    expect(output).not.toMatch(/[0-9a-f]{64}/);
  });

  it("lists keys as a table for people by default, never printing a key", async () => {
    const created = await createWithCli("--name", "tabled");
    const result = await agentos("keys", "list");
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^ID\s+NAME\s+ROLE\s+REALM\s+HINT\s+CREATED$/);
    expect(lines.find((line) => line.startsWith(created.id))).toMatch(/\stabled\s+admin\s/);
    expect(result.stdout).not.toContain(created.key);
  });
});

describe("agentos keys revoke", () => {
  it("revokes a key the server has not seen yet, so a running server refuses it with 401 at once", async () => {
    const created = await createWithCli("--name", "revoke-me");
    const result = await agentos("keys", "revoke", created.id);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Revoked ${created.id}`);

    expect(await healthStatus(created.key)).toBe(401);
    const listed = JSON.parse((await agentos("keys", "list", "--json")).stdout) as {
      keys: Array<{ id: string }>;
    };
    expect(listed.keys.map((entry) => entry.id)).not.toContain(created.id);
  });

  it("revoking through the API refuses the key at once, even one the server has just verified", async () => {
    const created = await createWithCli("--name", "revoke-over-http");
    expect(await healthStatus(created.key)).toBe(200);

    const revoked = await server.request(`/api/keys/${created.id}`, { method: "DELETE", key: ADMIN_KEY });
    expect(revoked.status).toBe(204);
    expect(await healthStatus(created.key)).toBe(401);
  });

  // The CLI is another process: the server learns of its revocation through the revocation epoch,
  // which it polls every second, not through its own cache eviction.
  it("refuses within seconds a key the server verified just before a CLI revocation", async () => {
    const created = await createWithCli("--name", "cached-then-revoked");
    expect(await healthStatus(created.key)).toBe(200);

    expect((await agentos("keys", "revoke", created.id)).code).toBe(0);

    const deadline = Date.now() + 10_000;
    let status = 200;
    while (status !== 401 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      status = await healthStatus(created.key);
    }
    expect(status).toBe(401);
  }, 30_000);

  it("exits non-zero with a clear message on stderr for an id that does not exist", async () => {
    const result = await agentos("keys", "revoke", "key_doesnotexist");
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("API key key_doesnotexist not found");
    expect(result.stderr).not.toMatch(/^\s+at /m);
    expect(result.stdout).not.toContain("Revoked");
  });
});
