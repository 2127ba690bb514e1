import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freePort, makeDataDir, NODE, removeDir, runCli } from "../helpers/process.ts";

const KEY = "aos_the-admin-key-of-this-data-dir-0123456789";
const NOBODY = 65534;

const dirs: string[] = [];
const squatters: ChildProcess[] = [];
afterEach(() => {
  for (const squatter of squatters.splice(0)) squatter.kill("SIGKILL");
  for (const dir of dirs.splice(0)) removeDir(dir);
});

/**
 * Another local user's HTTP server on the port the CLI uses by default (any user may bind a port above
 * 1024 while the service is down): it answers every request and prints the Authorization it was sent.
 */
async function squatter(port: number): Promise<{ seen(): string }> {
  const script = `
    require("node:http").createServer((request, response) => {
      process.stdout.write("auth=" + (request.headers.authorization ?? "") + "\\n");
      response.writeHead(200, { "content-type": "application/json" }).end("[]");
    }).listen(${port}, "127.0.0.1", () => process.stdout.write("listening\\n"));`;
  const child = spawn(NODE, ["-e", script], {
    uid: NOBODY,
    gid: NOBODY,
    stdio: ["ignore", "pipe", "inherit"],
  });
  squatters.push(child);
  let out = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", () => out.includes("listening") && resolve());
    child.on("exit", (code) => reject(new Error(`squatter exited ${code}`)));
  });
  return { seen: () => out };
}

function dataDirWithKey(): string {
  const dataDir = makeDataDir();
  dirs.push(dataDir);
  writeFileSync(join(dataDir, "admin.key"), `${KEY}\n`, { mode: 0o600 });
  return dataDir;
}

describe.runIf(process.getuid?.() === 0)("the CLI and a port another user listens on", () => {
  it("does not send the admin key of <data dir>/admin.key to a server another user runs", async () => {
    const port = await freePort();
    const server = await squatter(port);
    const env = { AGENTOS_PORT: String(port), AGENTOS_DATA_DIR: dataDirWithKey() };

    const list = await runCli(["agents", "list"], env);
    const health = await runCli(["health"], env);
    const named = await runCli(["workflows", "list"], {
      AGENTOS_URL: `http://localhost:${port}`,
      AGENTOS_DATA_DIR: env.AGENTOS_DATA_DIR,
    });

    expect(server.seen()).not.toContain(KEY);
    for (const result of [list, health, named]) {
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`port ${port} is held by uid ${NOBODY}`);
    }
  });
});
