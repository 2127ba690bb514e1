import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { EgressGate, SOCKET_NAME } from "../../../src/shared/process/sandbox/egress.ts";
import { fakeDnsPolicy } from "../../helpers/fake-dns.ts";
import { freePort, NODE } from "../../helpers/process.ts";

const RELAY = fileURLToPath(new URL("../../../src/shared/process/sandbox/egress-relay.mjs", import.meta.url));

const DNS: Record<string, string> = {
  "allowed.test": "127.0.0.2",
  "other.test": "127.0.0.2",
  "evil.test": "127.0.0.1",
};
const policy = fakeDnsPolicy(DNS);

let upstream: Server;
let port: number;
let root: string;
let gate: EgressGate;

beforeAll(async () => {
  upstream = createServer((req, res) => res.end(`upstream saw ${req.headers.host}${req.url}`));
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.2", resolve));
  const address = upstream.address();
  port = typeof address === "object" && address ? address.port : 0;
});

afterAll(() => {
  upstream.close();
});

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "egress-"));
  gate = new EgressGate(policy, join(root, "egress"));
});

afterEach(async () => {
  await gate.close();
  rmSync(root, { recursive: true, force: true });
});

/** A plain HTTP GET through the proxy on `socketPath`: the status and body. */
function get(socketPath: string, url: string): Promise<{ status?: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path: url, headers: { host: new URL(url).host } }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** An open CONNECT tunnel through the proxy on `socketPath`. */
function tunnel(socketPath: string, authority: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method: "CONNECT", path: authority });
    req.on("connect", (_res, socket: Socket) => resolve(socket));
    req.on("error", reject);
    req.end();
  });
}

describe("EgressGate", () => {
  it("gives each key a directory of its own with the proxy's socket in it, reachable by any uid", async () => {
    const dir = await gate.socketDir("agent/../../etc", null);
    expect(dirname(dir)).toBe(join(root, "egress"));
    expect(dir).toMatch(/\/[0-9a-f]{24}$/);
    expect(statSync(join(root, "egress")).mode & 0o777).toBe(0o711);
    expect(statSync(dir).mode & 0o777).toBe(0o755);
    const socket = join(dir, SOCKET_NAME);
    expect(statSync(socket).isSocket()).toBe(true);
    expect(statSync(socket).mode & 0o777).toBe(0o666);
    expect(await gate.socketDir("agent/../../etc", null)).toBe(dir);
    expect(await gate.socketDir("another agent", null)).not.toBe(dir);
  });

  it("holds every request to the SSRF rule and the key's allowlist", async () => {
    const socket = join(await gate.socketDir("agent", ["allowed.test", "evil.test"]), SOCKET_NAME);
    expect(await get(socket, `http://allowed.test:${port}/ok`)).toEqual({
      status: 200,
      body: `upstream saw allowed.test:${port}/ok`,
    });
    const other = await get(socket, `http://other.test:${port}/`);
    expect(other.status).toBe(403);
    expect(other.body).toContain("other.test is not on the agent's egress allowlist");
    const evil = await get(socket, `http://evil.test:${port}/`);
    expect(evil.status).toBe(403);
    expect(evil.body).toContain("resolves to blocked IP 127.0.0.1");
  });

  it("keeps the proxy while the allowlist stays, and replaces it (ending its tunnels) when it changes", async () => {
    const dir = await gate.socketDir("agent", ["allowed.test"]);
    const open = await tunnel(join(dir, SOCKET_NAME), `allowed.test:${port}`);
    const ended = new Promise<void>((resolve) => open.once("close", () => resolve()));
    expect(await gate.socketDir("agent", ["allowed.test"])).toBe(dir);
    expect(open.destroyed).toBe(false);

    expect(await gate.socketDir("agent", ["other.test"])).toBe(dir);
    await ended;
    const socket = join(dir, SOCKET_NAME);
    expect((await get(socket, `http://allowed.test:${port}/`)).status).toBe(403);
    expect((await get(socket, `http://other.test:${port}/`)).status).toBe(200);
  });

  it("removes the socket files on close", async () => {
    const first = join(await gate.socketDir("one", null), SOCKET_NAME);
    const second = join(await gate.socketDir("two", ["allowed.test"]), SOCKET_NAME);
    await gate.close();
    expect(existsSync(first)).toBe(false);
    expect(existsSync(second)).toBe(false);
  });
});

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** `egress-relay.mjs <socket> <port> -- <command…>` with the proxy variables a launcher sets. */
async function relay(socket: string, command: string[]): Promise<Run> {
  const relayPort = await freePort();
  const proxyUrl = `http://127.0.0.1:${relayPort}`;
  const env = { ...process.env, HTTP_PROXY: proxyUrl, http_proxy: proxyUrl };
  const child = spawn(NODE, [RELAY, socket, String(relayPort), "--", ...command], { env });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** A program that GETs argv[1] through $HTTP_PROXY, prints the status and body, and exits with argv[2]. */
const FETCH = `
const proxy = new URL(process.env.HTTP_PROXY);
const target = new URL(process.argv[1]);
const req = require("node:http").request(
  { host: proxy.hostname, port: proxy.port, path: target.href, headers: { host: target.host } },
  (res) => {
    let body = "";
    res.setEncoding("utf8").on("data", (chunk) => (body += chunk));
    res.on("end", () => {
      console.log(res.statusCode, body.trim());
      process.exit(Number(process.argv[2]));
    });
  },
);
req.on("error", (error) => { console.error(error.message); process.exit(99); });
req.end();
`;

describe("egress-relay.mjs", () => {
  it("relays the command's connections to the proxy and exits with its code", async () => {
    const socket = join(await gate.socketDir("agent", ["allowed.test"]), SOCKET_NAME);
    const run = await relay(socket, [NODE, "-e", FETCH, `http://allowed.test:${port}/via-relay`, "0"]);
    expect(run).toMatchObject({ code: 0, stdout: `200 upstream saw allowed.test:${port}/via-relay\n` });
  });

  it("passes on a non-zero exit code, and the proxy's refusal reaches the command", async () => {
    const socket = join(await gate.socketDir("agent", ["allowed.test"]), SOCKET_NAME);
    const run = await relay(socket, [NODE, "-e", FETCH, `http://other.test:${port}/`, "3"]);
    expect(run.code).toBe(3);
    expect(run.stdout).toMatch(/^403 .*other\.test is not on the agent's egress allowlist\n$/);
  });

  it("ends with the signal that ended the command", async () => {
    const socket = join(await gate.socketDir("agent", null), SOCKET_NAME);
    const run = await relay(socket, [NODE, "-e", "process.kill(process.pid, 'SIGTERM')"]);
    expect(run).toMatchObject({ code: null, signal: "SIGTERM" });
  });

  it("exits 127 with the reason when the command cannot be started", async () => {
    const socket = join(await gate.socketDir("agent", null), SOCKET_NAME);
    const run = await relay(socket, ["/nonexistent/command"]);
    expect(run.code).toBe(127);
    expect(run.stderr).toMatch(/^\/nonexistent\/command: .*ENOENT/);
  });
});
