import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type IIIClient, InvocationError } from "iii-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { connectWorker, eventually, rawClient, sleep } from "../../helpers/iii.ts";
import { json, startTestServer, type TestServer } from "../../helpers/server.ts";

// Conformance with the real iii-sdk@0.22.1 (reference/iii-protocol.md §14): connections coming and going.
const SLOW_WORKER = fileURLToPath(new URL("./fixtures/slow-worker.ts", import.meta.url));
let server: TestServer | undefined;
const workers: IIIClient[] = [];

async function start(overrides: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  server = await startTestServer(overrides);
  return server;
}

function worker(url: string, name: string, options = {}): IIIClient {
  const client = connectWorker(url, name, options);
  workers.push(client);
  return client;
}

afterEach(async () => {
  await Promise.all(workers.splice(0).map((client) => client.shutdown()));
  await server?.close();
  server = undefined;
});

describe("a worker that dies", () => {
  it("fails calls waiting on it with invocation_stopped and removes its functions and routes at once", async () => {
    const { service, request } = await start();
    const url = service.engineUrl as string;
    const child = spawn(process.execPath, [SLOW_WORKER, url], { stdio: "ignore" });
    const observer = worker(url, "observer");
    const events: Array<{ event: string; worker_id: string }> = [];
    observer.registerFunction("observer::workers", async (data: { event: string; worker_id: string }) => {
      events.push(data);
    });
    observer.registerTrigger({
      type: "engine::workers-available",
      function_id: "observer::workers",
      config: {},
    });
    await eventually(() => service.engine.functions.get("slow::ready"), 10_000);
    const waiting = observer
      .trigger({ function_id: "slow::fn", payload: {}, timeoutMs: 20_000 })
      .catch((e) => e);
    const httpWaiting = request("/api/slow");
    await eventually(() =>
      [...service.iii.hub.connections.values()].some((conn) => conn.pendingCount() === 2),
    );
    child.kill("SIGKILL");

    const error = (await waiting) as InvocationError;
    expect(error).toBeInstanceOf(InvocationError);
    expect(error.code).toBe("invocation_stopped");
    const response = await httpWaiting;
    expect(response.status).toBe(503);
    expect((await json(response)).error).toMatch(/Invocation stopped: worker slow-process disconnected/);

    const gone = (await observer
      .trigger({ function_id: "slow::fn", payload: {} })
      .catch((e) => e)) as InvocationError;
    expect(gone.code).toBe("function_not_found");
    expect((await request("/api/slow")).status).toBe(404);
    await eventually(() => events.some((event) => event.event === "worker_disconnected"));
  });
});

describe("reconnecting", () => {
  it("replays a dropped worker's functions, routes and cron under the same trigger ids without double firing", async () => {
    const { service, request } = await start();
    const url = service.engineUrl as string;
    const ticks: string[] = [];
    const a = worker(url, "comeback");
    a.registerFunction("comeback::hello", async () => ({ body: "hello again" }));
    a.registerFunction("comeback::tick", async (data: { scheduled_time: string }) => {
      ticks.push(data.scheduled_time);
    });
    a.registerTrigger({
      type: "http",
      function_id: "comeback::hello",
      config: { api_path: "/api/comeback" },
    });
    a.registerTrigger({ type: "cron", function_id: "comeback::tick", config: { expression: "* * * * * *" } });
    const ids = () =>
      service.engine.triggers
        .list()
        .filter((record) => record.function_id.startsWith("comeback::"))
        .map((record) => record.id)
        .sort();
    await eventually(() => ids().length === 2);
    const before = ids();
    const first = [...service.iii.hub.connections.values()].find((conn) => conn.name === "comeback");
    first?.socket.terminate();
    await eventually(() =>
      [...service.iii.hub.connections.values()].some((conn) => conn.name === "comeback" && conn !== first),
    );
    await eventually(() => ids().length === 2);
    expect(ids()).toEqual(before);
    expect(await (await request("/api/comeback")).json()).toBe("hello again");
    ticks.length = 0;
    await sleep(2500);
    // One binding fires once per second: no second copy of the cron job survived the reconnect.
    expect(new Set(ticks).size).toBe(ticks.length);
    expect(ticks.length).toBeGreaterThanOrEqual(1);
    expect(ticks.length).toBeLessThanOrEqual(3);
  });

  it("retires the previous connection on a valid reattach and ignores a forged one", async () => {
    const { service } = await start();
    const url = service.engineUrl as string;
    const old = await rawClient(url);
    const hello = await old.next((frame) => frame.type === "workerregistered");
    old.send({ type: "registerfunction", id: "raw::fn" });
    await eventually(() => service.engine.functions.get("raw::fn"));

    const forger = await rawClient(url);
    forger.send({ type: "reattach", previous_worker_id: hello.worker_id, reattach_token: "not-the-token" });
    forger.send({ type: "ping" });
    await forger.next((frame) => frame.type === "pong");
    expect(service.engine.functions.get("raw::fn")).toBeDefined();

    const fresh = await rawClient(url);
    const freshHello = await fresh.next((frame) => frame.type === "workerregistered");
    fresh.send({
      type: "reattach",
      previous_worker_id: hello.worker_id,
      reattach_token: hello.reattach_token,
    });
    fresh.send({ type: "registerfunction", id: "raw::fn" });
    await old.closed;
    fresh.send({ type: "ping" });
    await fresh.next((frame) => frame.type === "pong");
    // The old connection's cleanup ran before the replay, so it did not take the new registration along.
    expect(service.engine.functions.get("raw::fn")?.worker).toBe(freshHello.worker_id);
    forger.socket.close();
    fresh.socket.close();
  });
});

describe("the engine token", () => {
  const token = "engine-token-0123456789";

  it("refuses a connection without the token and accepts one that presents it", async () => {
    const { service } = await start({ engineToken: token });
    const url = service.engineUrl as string;
    await expect(rawClient(url)).rejects.toThrow(/401/);
    await expect(rawClient(url, { authorization: "Bearer wrong-token-0123456789" })).rejects.toThrow(/401/);
    const byQuery = await rawClient(`${url}/?token=${token}`);
    expect(await byQuery.next((frame) => frame.type === "workerregistered")).toBeDefined();
    byQuery.socket.close();
    // The SDK's telemetry socket cannot carry the header; it is let in without the token, and ignored.
    const otel = await rawClient(`${url}/otel`);
    otel.socket.close();
    const sdk = worker(url, "trusted", { headers: { authorization: `Bearer ${token}` } });
    sdk.registerFunction("trusted::fn", async () => "ok");
    await eventually(() => service.engine.functions.get("trusted::fn"));
  });

  it("refuses to open the worker port beyond loopback without a token", async () => {
    await expect(start({ engineHost: "0.0.0.0" })).rejects.toThrow(/AGENTOS_ENGINE_TOKEN/);
  });
});
