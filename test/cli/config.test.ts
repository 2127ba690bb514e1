import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeOpenAI } from "../helpers/fake-openai.ts";
import {
  freePort,
  makeDataDir,
  removeDir,
  runCli,
  type ServeProcess,
  startServe,
  stopAll,
} from "../helpers/process.ts";

const ADMIN_KEY = "cli-config-admin-key-0123456789abcdef";
const SECRET = "sk-test-123";

const servers: ServeProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await stopAll(servers);
  for (const dir of dirs.splice(0)) removeDir(dir);
});

function newDataDir(): string {
  const dir = makeDataDir();
  dirs.push(dir);
  return dir;
}

async function serve(dataDir: string): Promise<ServeProcess> {
  const server = await startServe({ dataDir, env: { AGENTOS_API_KEY: ADMIN_KEY } });
  servers.push(server);
  return server;
}

async function vaultNames(server: ServeProcess): Promise<string[]> {
  const response = await server.request("/api/vault", { key: ADMIN_KEY });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { keys: Array<{ key: string }> };
  return body.keys.map((entry) => entry.key);
}

describe("agentos config set-key", () => {
  it("stores the provider key encrypted: listed by the vault, absent from the raw SQLite file", async () => {
    const dataDir = newDataDir();
    const result = await runCli(["config", "set-key", "openai", SECRET], { AGENTOS_DATA_DIR: dataDir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("openai");
    expect(result.stdout + result.stderr).not.toContain(SECRET);

    // The CLI has exited and closed the database, so every byte is in agentos.db (plus any -wal file).
    for (const file of readdirSync(dataDir).filter((name) => name.startsWith("agentos.db"))) {
      expect(readFileSync(join(dataDir, file)).includes(SECRET)).toBe(false);
    }
    const db = new DatabaseSync(join(dataDir, "agentos.db"), { readOnly: true });
    try {
      const rows = db.prepare("SELECT key, value FROM state WHERE scope = 'vault'").all() as Array<{
        key: string;
        value: string;
      }>;
      expect(rows.map((row) => row.key)).toEqual(["provider:openai:api_key"]);
      expect(rows[0].value).not.toContain(SECRET);
      expect(rows[0].value).not.toContain(Buffer.from(SECRET).toString("base64"));
    } finally {
      db.close();
    }
    expect(statSync(join(dataDir, "vault.key")).mode & 0o777).toBe(0o600);

    const server = await serve(dataDir);
    expect(await vaultNames(server)).toEqual(["provider:openai:api_key"]);
    const verify = await server.request("/api/audit/verify", { key: ADMIN_KEY });
    expect(await verify.json()).toMatchObject({ valid: true, length: 1 });
  });

  it("reads the key from standard input when it is left out or -, so no process list shows it", async () => {
    const dataDir = newDataDir();
    const piped = await runCli(
      ["config", "set-key", "openai"],
      { AGENTOS_DATA_DIR: dataDir },
      20_000,
      `${SECRET}\n`,
    );
    expect(piped.code).toBe(0);
    const dashed = await runCli(
      ["config", "set-secret", "channel:slack:signing_secret", "-"],
      { AGENTOS_DATA_DIR: dataDir },
      20_000,
      "s3cret-value",
    );
    expect(dashed.code).toBe(0);
    const empty = await runCli(["config", "set-key", "openai"], { AGENTOS_DATA_DIR: dataDir }, 20_000, "\n");
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain("No openai API key given");
    const fake = await startFakeOpenAI();
    try {
      const server = await startServe({
        dataDir,
        env: { AGENTOS_API_KEY: ADMIN_KEY, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "" },
      });
      servers.push(server);
      expect((await vaultNames(server)).sort()).toEqual([
        "channel:slack:signing_secret",
        "provider:openai:api_key",
      ]);
      // The key as piped, without its newline: the provider is called with exactly it.
      const embedded = await server.request("/v1/embeddings", {
        key: ADMIN_KEY,
        method: "POST",
        json: { model: "text-embedding-3-small", input: "hello" },
      });
      expect(embedded.status).toBe(200);
      expect(fake.requests.at(-1)).toMatchObject({ authorization: `Bearer ${SECRET}` });
    } finally {
      await fake.close();
    }
  });

  it("reaches a server already running on the same data dir, with the provider name lower-cased", async () => {
    const dataDir = newDataDir();
    const server = await serve(dataDir);

    const result = await runCli(["config", "set-key", "Anthropic", "sk-ant-test-456"], {
      AGENTOS_DATA_DIR: dataDir,
    });
    expect(result.code).toBe(0);
    expect(await vaultNames(server)).toEqual(["provider:anthropic:api_key"]);
  });

  it.each([
    ["open/ai", 'Unknown provider "open/ai" (did you mean openai?)'],
    ["opneai", 'Unknown provider "opneai" (did you mean openai?)'],
    ["nosuch", "the providers are: anthropic, openai"],
  ])(
    "exits non-zero for the unknown provider %s, naming the known ones, and stores nothing",
    async (name, text) => {
      const dataDir = newDataDir();
      const result = await runCli(["config", "set-key", name, SECRET], { AGENTOS_DATA_DIR: dataDir });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain(text);
      expect(result.stderr).not.toMatch(/^\s+at /m);
      const db = new DatabaseSync(join(dataDir, "agentos.db"), { readOnly: true });
      try {
        expect(db.prepare("SELECT count(*) AS n FROM state WHERE scope = 'vault'").get()).toEqual({ n: 0 });
      } finally {
        db.close();
      }
    },
  );
});

describe("agentos serve with invalid configuration", () => {
  async function serveWith(env: Record<string, string>) {
    const parent = newDataDir();
    const dataDir = join(parent, "data");
    const result = await runCli(["serve"], {
      AGENTOS_DATA_DIR: dataDir,
      AGENTOS_PORT: String(await freePort()),
      AGENTOS_HOST: "127.0.0.1",
      AGENTOS_ENGINE_PORT: String(await freePort()),
      ...env,
    });
    return { ...result, dataDirCreated: existsSync(dataDir) };
  }

  it.each([
    ["AGENTOS_PORT", "notaport"],
    ["AGENTOS_PORT", "70000"],
    ["AGENTOS_RATE_LIMITS", "bogus"],
    ["AGENTOS_API_KEY", "too-short"],
    ["AGENTOS_LOG_LEVEL", "loud"],
    ["AGENTOS_ENGINE_TOKEN", "short"],
    ["AGENTOS_ENGINE_HOST", "0.0.0.0"],
  ])(
    "%s=%s exits non-zero before touching the data dir, naming the variable without a stack trace",
    async (name, value) => {
      const result = await serveWith({ [name]: value });
      expect(result.code).not.toBe(0);
      expect(result.signal).toBeNull();
      expect(result.stderr).toContain(name);
      expect(result.stderr).not.toMatch(/^\s+at /m);
      expect(result.stdout).not.toMatch(/aos_/);
      expect(result.dataDirCreated).toBe(false);
    },
  );

  it("exits non-zero naming the address when the port is already in use", async () => {
    const dataDir = newDataDir();
    const running = await serve(dataDir);
    const result = await runCli(["serve"], {
      AGENTOS_DATA_DIR: newDataDir(),
      AGENTOS_PORT: String(running.port),
      AGENTOS_HOST: "127.0.0.1",
      AGENTOS_ENGINE_PORT: String(await freePort()),
      AGENTOS_API_KEY: ADMIN_KEY,
      AGENTOS_LOG_LEVEL: "silent",
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("EADDRINUSE");
    expect(result.stderr).toContain(String(running.port));
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });
});
