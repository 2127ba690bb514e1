import { Agent, request as httpRequest, type IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { makeDataDir, removeDir, type ServeProcess, startServe, stopAll } from "../helpers/process.ts";

const ADMIN_KEY = "cli-lifecycle-admin-key-0123456789";
// Info level, so the shutdown line and each request's "incoming request" line reach stdout.
const ENV = { AGENTOS_API_KEY: ADMIN_KEY, AGENTOS_LOG_LEVEL: "debug" };

const servers: ServeProcess[] = [];
let dataDir: string;

beforeAll(() => {
  dataDir = makeDataDir();
});
afterEach(() => stopAll(servers));
afterAll(() => removeDir(dataDir));

async function serve(): Promise<ServeProcess> {
  const server = await startServe({ dataDir, env: ENV });
  servers.push(server);
  return server;
}

async function post(server: ServeProcess, path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await server.request(path, { method: "POST", key: ADMIN_KEY, json: body });
  expect(response.status).toBe(201);
  return (await response.json()) as Record<string, unknown>;
}

// biome-ignore lint/suspicious/noExplicitAny: assertions read arbitrary JSON bodies
async function getJson(server: ServeProcess, path: string, key = ADMIN_KEY): Promise<any> {
  const response = await server.request(path, { key });
  expect(response.status).toBe(200);
  return response.json();
}

/**
 * Starts POST /api/vault over a keep-alive connection that the client never closes by itself, and
 * sends only part of the body; `finish()` sends the rest.
 */
function startSlowVaultSet(server: ServeProcess, secret: { key: string; value: string }) {
  const body = JSON.stringify(secret);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const request = httpRequest({
    host: "127.0.0.1",
    port: server.port,
    method: "POST",
    path: "/api/vault",
    agent,
    headers: {
      authorization: `Bearer ${ADMIN_KEY}`,
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
    },
  });
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    request.on("error", reject);
    request.on("response", (reply: IncomingMessage) => {
      let text = "";
      reply.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
      reply.on("end", () => resolve({ status: reply.statusCode ?? 0, body: text }));
      reply.on("error", reject);
    });
  });
  // A failure surfaces where the test awaits the response; until then it is not an unhandled rejection.
  response.catch(() => undefined);
  const socket = new Promise<Socket>((resolve) => {
    request.on("socket", (opened) => opened.on("connect", () => resolve(opened)));
  });
  const connectionClosed = socket.then(
    (opened) => new Promise<void>((resolve) => opened.on("close", resolve)),
  );
  request.write(body.slice(0, 5));
  return {
    response,
    localPort: socket.then((opened) => opened.localPort ?? 0),
    connectionClosed,
    finish: () => request.end(body.slice(5)),
    dispose: () => agent.destroy(),
  };
}

describe("graceful shutdown and restart on the same data dir", () => {
  let createdKey: string;

  it("on SIGTERM logs the shutdown, finishes requests already in flight, closes idle connections and exits 0", async () => {
    const server = await serve();

    const created = await post(server, "/api/keys", { name: "made before restart" });
    createdKey = created.key as string;
    expect((await server.request("/api/health", { key: createdKey })).status).toBe(200);
    await post(server, "/api/vault", { key: "channel:support:secret", value: "before-restart-value" });

    const first = startSlowVaultSet(server, { key: "channel:slow:secret", value: "in-flight-value" });
    const second = startSlowVaultSet(server, { key: "channel:slower:secret", value: "in-flight-value" });
    try {
      // At debug level the service logs "incoming request" (with the client's port) once it has the
      // request line and headers: from then on each request is in flight, though its body is incomplete.
      for (const slow of [first, second]) {
        const clientPort = await slow.localPort;
        await server.waitForStdout(new RegExp(`"remotePort":${clientPort}\\b.*"msg":"incoming request"`));
      }

      server.child.kill("SIGTERM");
      await server.waitForStdout(/"signal":"SIGTERM".*shutting down/);

      first.finish();
      const firstReply = await first.response;
      expect(firstReply.status).toBe(201);
      expect(JSON.parse(firstReply.body)).toMatchObject({ key: "channel:slow:secret" });
      // The server hangs up the first keep-alive connection once it is idle, while the second request
      // is still in flight. (Before the fix it stayed open until the process exited at the end of the
      // grace period, and the second request below then failed.)
      await first.connectionClosed;

      second.finish();
      const secondReply = await second.response;
      expect(secondReply.status).toBe(201);
      expect(JSON.parse(secondReply.body)).toMatchObject({ key: "channel:slower:secret" });
    } finally {
      first.dispose();
      second.dispose();
    }
    expect(await server.stop()).toEqual({ code: 0, signal: null });
    expect(server.stderr()).toBe("");
  });

  it("after the SIGTERM restart, keys, vault secrets and the audit chain are all still there", async () => {
    const server = await serve();

    expect((await server.request("/api/health", { key: createdKey })).status).toBe(200);

    const vault = await getJson(server, "/api/vault");
    const names = vault.keys.map((entry: { key: string }) => entry.key);
    expect(names).toEqual(
      expect.arrayContaining(["channel:support:secret", "channel:slow:secret", "channel:slower:secret"]),
    );
    expect(JSON.stringify(vault)).not.toContain("-value");

    const verify = await getJson(server, "/api/audit/verify");
    expect(verify).toMatchObject({ valid: true, brokenAt: null });
    // One vault_set entry per secret: fire-and-forget audit writes were drained before the exit.
    const audit = await getJson(server, "/api/audit?type=vault_set");
    const audited = JSON.stringify(audit);
    expect(audited).toContain("channel:support:secret");
    expect(audited).toContain("channel:slow:secret");
    expect(audited).toContain("channel:slower:secret");
  });

  it("on SIGINT logs the shutdown and exits 0, and the data survives that restart too", async () => {
    const server = await serve();
    await post(server, "/api/vault", { key: "channel:sigint:secret", value: "sigint-value" });

    expect(await server.stop("SIGINT")).toEqual({ code: 0, signal: null });
    expect(server.stdout()).toMatch(/"signal":"SIGINT".*shutting down/);

    const restarted = await serve();
    expect((await restarted.request("/api/health", { key: createdKey })).status).toBe(200);
    const vault = await getJson(restarted, "/api/vault");
    expect(vault.keys.map((entry: { key: string }) => entry.key)).toEqual(
      expect.arrayContaining(["channel:support:secret", "channel:slow:secret", "channel:sigint:secret"]),
    );
    expect(await getJson(restarted, "/api/audit/verify")).toMatchObject({ valid: true });
  });

  it("refuses connections once it has exited", async () => {
    const server = await serve();
    expect(await server.stop()).toEqual({ code: 0, signal: null });
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });
});
