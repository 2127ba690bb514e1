import { createConnection } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { IiiLimits } from "../../../src/engine/iii/limits.ts";
import { deferred } from "../../helpers/engine.ts";
import { eventually, type RawClient, rawClient } from "../../helpers/iii.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

// A misbehaving worker (bad frames, floods, huge frames, silence) cannot hurt the engine or other workers.
let server: TestServer | undefined;
const clients: RawClient[] = [];

async function connect(limits: Partial<IiiLimits> = {}, maxFrameBytes?: number): Promise<RawClient> {
  server ??= await startTestServer(maxFrameBytes ? { engineMaxFrameBytes: maxFrameBytes } : {}, {
    iiiLimits: limits,
  });
  const client = await rawClient(server.service.engineUrl as string);
  clients.push(client);
  await client.next((frame) => frame.type === "workerregistered");
  return client;
}

const resultFor = (id: string) => (frame: Record<string, unknown>) =>
  frame.type === "invocationresult" && frame.invocation_id === id;

afterEach(async () => {
  for (const client of clients.splice(0)) client.socket.terminate();
  await server?.close();
  server = undefined;
});

describe("malformed frames", () => {
  it("refuses each bad frame on its own and keeps the connection serving", async () => {
    const client = await connect();
    client.send("not json at all");
    client.send("   ");
    client.send("[1,2,3]");
    client.send({ type: "somethingnew", x: 1 });
    client.send({ type: "registerfunction" });
    client.send({ type: "invokefunction", invocation_id: "bad-1", data: {} });
    const refused = await client.next(resultFor("bad-1"));
    expect(refused.error).toEqual({
      code: "deserialization_error",
      message: 'invokefunction frame: "function_id" must be a non-empty string',
    });
    client.send({
      type: "invokefunction",
      invocation_id: "ok-1",
      function_id: "state::set",
      data: { scope: "s", key: "k", value: 1 },
      message_type: "ignored",
    });
    expect((await client.next(resultFor("ok-1"))).result).toMatchObject({ new_value: 1 });
    client.send({ type: "ping" });
    await client.next((frame) => frame.type === "pong");
  });

  it("accepts JSON sent in binary frames and ignores telemetry frames", async () => {
    const client = await connect();
    client.socket.send(Buffer.from("OTLP{}"));
    client.socket.send(
      Buffer.from(
        JSON.stringify({
          type: "invokefunction",
          invocation_id: "bin-1",
          function_id: "state::get",
          data: { scope: "s", key: "x" },
        }),
      ),
    );
    const answer = await client.next(resultFor("bin-1"));
    expect(answer.error).toBeUndefined();
    expect("result" in answer).toBe(false);
  });
});

describe("limits", () => {
  it("closes a connection that sends a frame over the size limit, and only that one", async () => {
    const big = await connect({}, 64 * 1024);
    const other = await connect();
    big.send({ type: "invokefunction", function_id: "x::y", data: "x".repeat(100_000) });
    expect((await big.closed).code).toBe(1009);
    other.send({
      type: "invokefunction",
      invocation_id: "after",
      function_id: "state::get",
      data: { scope: "s", key: "k" },
    });
    await other.next(resultFor("after"));
  });

  it("refuses calls beyond a worker's in-flight limit with too_many_invocations", async () => {
    const gate = deferred<void>();
    const client = await connect({ maxInFlightPerWorker: 2 });
    server?.service.engine
      .worker("test")
      .registerFunction({ id: "test::wait" }, () => gate.promise.then(() => "done"));
    for (const id of ["f1", "f2", "f3"])
      client.send({ type: "invokefunction", invocation_id: id, function_id: "test::wait" });
    expect(((await client.next(resultFor("f3"))).error as { code: string }).code).toBe(
      "too_many_invocations",
    );
    gate.resolve();
    expect((await client.next(resultFor("f1"))).result).toBe("done");
    expect((await client.next(resultFor("f2"))).result).toBe("done");
  });

  it("refuses registrations beyond a worker's function limit and says so", async () => {
    const client = await connect({ maxFunctionsPerWorker: 2 });
    for (const id of ["lim::a", "lim::b", "lim::c"]) client.send({ type: "registerfunction", id });
    const rejected = await client.next((frame) => frame.type === "registrationrejected");
    expect(rejected).toMatchObject({ function_id: "lim::c" });
    expect(server?.service.engine.functions.get("lim::b")).toBeDefined();
    expect(server?.service.engine.functions.get("lim::c")).toBeUndefined();
  });

  it("does not let a worker take over an engine function", async () => {
    const client = await connect();
    client.send({ type: "registerfunction", id: "vault::get" });
    const rejected = await client.next((frame) => frame.type === "registrationrejected");
    expect(rejected.message).toMatch(/provided by the engine/);
    expect(server?.service.engine.functions.get("vault::get")?.worker).toBe("vault");
  });

  it("times out calls to a worker that never answers and forgets them", async () => {
    const client = await connect();
    client.send({ type: "registerfunction", id: "mute::fn" });
    const engine = server?.service.engine;
    await eventually(() => engine?.functions.get("mute::fn"));
    await expect(
      engine?.trigger({ function_id: "mute::fn", payload: {}, timeout_ms: 100 }),
    ).rejects.toMatchObject({
      code: "timeout",
    });
    const conn = [...(server?.service.iii.hub.connections.values() ?? [])][0];
    expect(conn?.pendingCount()).toBe(0);
  });
});

describe("calls from workers", () => {
  it("end a call the engine cannot finish after the worker-call timeout, freeing its slot", async () => {
    const client = await connect({ workerCallTimeoutMs: 100, maxInFlightPerWorker: 1 });
    server?.service.engine
      .worker("test")
      .registerFunction({ id: "test::never" }, () => new Promise(() => undefined));
    client.send({ type: "invokefunction", invocation_id: "n1", function_id: "test::never" });
    expect(((await client.next(resultFor("n1"))).error as { code: string }).code).toBe("timeout");
    client.send({
      type: "invokefunction",
      invocation_id: "n2",
      function_id: "state::get",
      data: { scope: "s", key: "k" },
    });
    expect((await client.next(resultFor("n2"))).error).toBeUndefined();
  });
});

describe("liveness", () => {
  it("drops a worker that answers no pings, and keeps one that does", async () => {
    const alive = await connect({ pingIntervalMs: 50, idleTimeoutMs: 300 });
    const url = server?.service.engineUrl as string;
    const silent = await rawClient(url, {}, { autoPong: false });
    clients.push(silent);
    await silent.closed;
    expect(alive.socket.readyState).toBe(alive.socket.OPEN);
  });
});

describe("the worker port", () => {
  it("survives clients that reset their connection while being refused", async () => {
    await connect();
    const { port } = new URL(server?.service.engineUrl as string);
    for (let i = 0; i < 20; i++) {
      const socket = createConnection(Number(port), "127.0.0.1");
      await new Promise((resolve) => socket.once("connect", resolve));
      socket.write("GET /nope HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
      socket.resetAndDestroy();
    }
    const after = await rawClient(server?.service.engineUrl as string);
    clients.push(after);
    expect(await after.next((frame) => frame.type === "workerregistered")).toBeDefined();
  });

  it("accepts the SDK's telemetry socket without listing it as a worker, and refuses other paths", async () => {
    await connect();
    const url = server?.service.engineUrl as string;
    const otel = await rawClient(`${url}/otel`);
    clients.push(otel);
    otel.socket.send(Buffer.from("OTLP{}"));
    expect(server?.service.iii.hub.connections.size).toBe(1);
    await expect(rawClient(`${url}/elsewhere`)).rejects.toThrow(/404/);
  });
});
