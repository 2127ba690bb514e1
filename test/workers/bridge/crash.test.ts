import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../../helpers/iii.ts";
import { makeDataDir, removeDir, type ServeProcess, startServe, stopAll } from "../../helpers/process.ts";
import { processesWithEnv } from "../../helpers/procs.ts";
import type { JsonBody } from "../../helpers/server.ts";

const KEY = "bridge-crash-admin-key-0123456789";
const ENV = { AGENTOS_API_KEY: KEY, AGENTOS_RATE_LIMITS: "off" };
const servers: ServeProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await stopAll(servers);
  for (const dir of dirs.splice(0)) removeDir(dir);
});

async function send(server: ServeProcess, method: string, path: string, body?: unknown) {
  const response = await server.request(path, {
    method,
    key: KEY,
    ...(body === undefined ? {} : { json: body }),
  });
  return { status: response.status, body: (await response.json()) as JsonBody };
}

describe("a bridge run when the service is killed", () => {
  it("is interrupted at the next start, and its processes (children included) are gone", async () => {
    const dataDir = makeDataDir();
    dirs.push(dataDir);
    const first = await startServe({ dataDir, env: ENV });
    servers.push(first);
    const runtime = await send(first, "POST", "/api/bridge/runtimes", {
      kind: "process",
      name: "sleeper",
      command: "sh",
      args: ["-c", "sleep 60 & sleep 60; wait"],
    });
    expect(runtime.status).toBe(201);
    const invoked = await send(first, "POST", "/api/bridge/invoke", { runtimeId: runtime.body.id });
    const runId = invoked.body.runId as string;
    await eventually(() => processesWithEnv("AGENTOS_BRIDGE_RUN", runId).length >= 2);
    await first.stop("SIGKILL");
    // Killed with -9, the service could not take them along: they are still there until it restarts.
    expect(processesWithEnv("AGENTOS_BRIDGE_RUN", runId).length).toBeGreaterThan(0);
    const second = await startServe({ dataDir, env: ENV });
    servers.push(second);
    const run = await send(second, "GET", `/api/bridge/runs/${runId}`);
    expect(run.body).toMatchObject({
      status: "interrupted",
      error: expect.stringContaining("processes were killed"),
    });
    await eventually(() => processesWithEnv("AGENTOS_BRIDGE_RUN", runId).length === 0);
  });
});
