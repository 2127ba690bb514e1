import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  freePort,
  makeDataDir,
  removeDir,
  runCli,
  type ServeProcess,
  startServe,
} from "../helpers/process.ts";

const ADMIN_KEY = "cli-health-admin-key-0123456789abcdef";

const dirs: string[] = [];
let withEnvKey: ServeProcess;
let withKeyFile: ServeProcess;

beforeAll(async () => {
  dirs.push(makeDataDir(), makeDataDir());
  [withEnvKey, withKeyFile] = await Promise.all([
    startServe({ dataDir: dirs[0], env: { AGENTOS_API_KEY: ADMIN_KEY } }),
    startServe({ dataDir: dirs[1] }),
  ]);
});

afterAll(async () => {
  await Promise.all([withEnvKey?.stop(), withKeyFile?.stop()]);
  for (const dir of dirs) removeDir(dir);
});

function expectHealthJson(stdout: string): void {
  expect(JSON.parse(stdout)).toMatchObject({ status: "ok", version: expect.any(String) });
}

describe("agentos health", () => {
  it("prints the health JSON and exits 0 with the key from AGENTOS_API_KEY", async () => {
    const result = await runCli(["health", "--url", withEnvKey.url], {
      AGENTOS_API_KEY: ADMIN_KEY,
      AGENTOS_DATA_DIR: emptyDataDir(),
    });
    expect(result.code).toBe(0);
    expectHealthJson(result.stdout);
  });

  it("prints the health JSON and exits 0 with the key read from <data dir>/admin.key", async () => {
    const result = await runCli(["health", "--url", withKeyFile.url], {
      AGENTOS_DATA_DIR: withKeyFile.dataDir,
    });
    expect(result.code).toBe(0);
    expectHealthJson(result.stdout);
  });

  it("finds the server from AGENTOS_PORT when --url is not given", async () => {
    const result = await runCli(["health"], {
      AGENTOS_API_KEY: ADMIN_KEY,
      AGENTOS_PORT: String(withEnvKey.port),
      AGENTOS_DATA_DIR: emptyDataDir(),
    });
    expect(result.code).toBe(0);
    expectHealthJson(result.stdout);
  });

  it("exits non-zero naming HTTP 401 when the key is wrong", async () => {
    const result = await runCli(["health", "--url", withEnvKey.url, "--key", "wrong-key-0123456789abcdef"], {
      AGENTOS_DATA_DIR: emptyDataDir(),
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("HTTP 401");
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });

  it("exits non-zero with a message saying the service cannot be reached on a closed port", async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const result = await runCli(["health", "--url", url], {
      AGENTOS_API_KEY: ADMIN_KEY,
      AGENTOS_DATA_DIR: emptyDataDir(),
    });
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(`cannot reach the service at ${url}`);
    expect(result.stderr).toContain("ECONNREFUSED");
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });
});

/** An empty data dir, so no admin.key is found by accident. */
function emptyDataDir(): string {
  const dir = makeDataDir();
  dirs.push(dir);
  return dir;
}
