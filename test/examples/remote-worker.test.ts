import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../helpers/iii.ts";
import { makeDataDir, NODE, removeDir, type ServeProcess, startServe, stopAll } from "../helpers/process.ts";
import { json } from "../helpers/server.ts";

const WORKER = fileURLToPath(new URL("../../examples/remote-worker/worker.mjs", import.meta.url));
const KEY = "example-admin-key-0123456789";
const servers: ServeProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await stopAll(servers);
  for (const dir of dirs.splice(0)) removeDir(dir);
});

describe("examples/remote-worker", () => {
  it("connects to `agentos serve` and answers GET /api/greet through its iii-sdk function", async () => {
    const dataDir = makeDataDir();
    dirs.push(dataDir);
    const server = await startServe({ dataDir, env: { AGENTOS_API_KEY: KEY } });
    servers.push(server);
    const worker = spawn(NODE, [WORKER], {
      env: { ...process.env, AGENTOS_ENGINE_URL: `ws://127.0.0.1:${server.enginePort}` },
      stdio: "ignore",
    });
    try {
      const response = await eventually(async () => {
        const answer = await server.request("/api/greet?name=Ada", { key: KEY });
        return answer.status === 200 ? answer : undefined;
      }, 15_000);
      expect(await json(response)).toEqual({ message: "Hello, Ada!", greeted: 1 });
      expect((await server.request("/api/greet")).status).toBe(401);
    } finally {
      worker.kill("SIGTERM");
    }
    await eventually(async () => (await server.request("/api/greet", { key: KEY })).status === 404, 10_000);
  });
});
