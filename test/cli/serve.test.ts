import { afterEach, describe, expect, it } from "vitest";
import { freePort, makeDataDir, removeDir, runCli } from "../helpers/process.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) removeDir(dir);
});

async function serveWith(env: Record<string, string>) {
  const dataDir = makeDataDir();
  dirs.push(dataDir);
  return runCli(["serve"], {
    AGENTOS_DATA_DIR: dataDir,
    AGENTOS_API_KEY: "serve-test-admin-key-0123456789",
    AGENTOS_PORT: String(await freePort()),
    AGENTOS_ENGINE_PORT: String(await freePort()),
    AGENTOS_LOG_LEVEL: "silent",
    ...env,
  });
}

describe("agentos serve with a listen address that is not this machine's", () => {
  it("names AGENTOS_HOST when the HTTP host does not resolve", async () => {
    const result = await serveWith({ AGENTOS_HOST: "no-such-host.invalid" });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("AGENTOS_HOST");
    expect(result.stderr).toContain("no-such-host.invalid");
  });

  it("names AGENTOS_ENGINE_HOST when the worker port's host is no address of this machine", async () => {
    const result = await serveWith({
      AGENTOS_ENGINE_HOST: "192.0.2.1",
      AGENTOS_ENGINE_TOKEN: "engine-token-0123456789abcdef",
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("AGENTOS_ENGINE_HOST");
    expect(result.stderr).toContain("192.0.2.1");
  });
});

describe("agentos with a data dir on a filesystem of the kernel's", () => {
  // Node's recursive mkdir never returned under /proc: `serve` and every in-process command hung there.
  it.each(["serve", "keys list"])(
    "agentos %s refuses /proc/… at once, naming AGENTOS_DATA_DIR",
    async (command) => {
      const result = await runCli(
        command.split(" "),
        {
          AGENTOS_DATA_DIR: "/proc/agentos-data-test",
          AGENTOS_API_KEY: "serve-test-admin-key-0123456789",
          // No service answers there: `keys list` runs in this process, on the data dir.
          AGENTOS_PORT: String(await freePort()),
          AGENTOS_ENGINE_PORT: String(await freePort()),
          AGENTOS_LOG_LEVEL: "silent",
        },
        60_000,
      );
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("AGENTOS_DATA_DIR /proc/agentos-data-test is inside /proc");
    },
  );
});
