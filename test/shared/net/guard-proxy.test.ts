import { mkdtempSync, rmSync, statSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GuardProxy } from "../../../src/shared/net/guard-proxy.ts";
import { fakeDnsPolicy } from "../../helpers/fake-dns.ts";

/** Names the fake resolver knows: two reach the test server, two a blocked address. */
const DNS: Record<string, string> = {
  "allowed.test": "127.0.0.2",
  "api.allowed.test": "127.0.0.2",
  "other.test": "127.0.0.2",
  "evil.test": "127.0.0.1",
  "metadata.test": "169.254.169.254",
};
const policy = fakeDnsPolicy(DNS);
const ALLOW = ["ALLOWED.test", "evil.test", "metadata.test", "127.0.0.1", "169.254.169.254"];

let upstream: Server;
let port: number;
/** Paths the upstream was asked for, so a refusal can be shown to have reached nothing. */
const reached: string[] = [];
let dir: string;
let socket: string;
let proxy: GuardProxy;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    reached.push(req.url ?? "");
    res.end(`upstream saw ${req.headers.host}${req.url}`);
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.2", resolve));
  const address = upstream.address();
  port = typeof address === "object" && address ? address.port : 0;
  dir = mkdtempSync(join(tmpdir(), "guard-proxy-"));
  socket = join(dir, "proxy.sock");
  proxy = new GuardProxy(policy, { allowDomains: ALLOW, explainRefusals: true });
  await proxy.listenUnix(socket);
});

afterAll(async () => {
  await proxy.close();
  upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  status?: number;
  body?: string;
  error?: string;
}

/** A plain HTTP request through the proxy at `socketPath` (absolute URL, as a proxy client sends it). */
function viaProxy(url: string, socketPath = socket): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: url, headers: { host: new URL(url).host } }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode, body }));
    });
    req.on("error", (error) => resolve({ error: error.message }));
    req.end();
  });
}

/** CONNECT `authority` through the proxy, then (when it is granted) a GET inside the tunnel. */
function viaTunnel(authority: string): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request({ socketPath: socket, method: "CONNECT", path: authority });
    // After a CONNECT's answer the socket is the caller's: a refusal's body, or the tunnel, is read from it.
    req.on("connect", (res, tunnel: Socket, head: Buffer) => {
      let body = head.toString("utf8");
      tunnel.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      tunnel.on("end", () => resolve({ status: res.statusCode, body }));
      if (res.statusCode === 200) {
        tunnel.write(`GET /tunnelled HTTP/1.1\r\nHost: ${authority}\r\nConnection: close\r\n\r\n`);
      }
    });
    req.on("error", (error) => resolve({ error: error.message }));
    req.end();
  });
}

describe("GuardProxy on a unix socket", () => {
  it("listens on the socket file, connectable by any uid", () => {
    expect(statSync(socket).isSocket()).toBe(true);
    expect(statSync(socket).mode & 0o777).toBe(0o666);
  });

  it("forwards a plain HTTP request to an allowed host", async () => {
    const answer = await viaProxy(`http://allowed.test:${port}/hello?x=1`);
    expect(answer).toEqual({ status: 200, body: `upstream saw allowed.test:${port}/hello?x=1` });
  });

  it("opens a CONNECT tunnel to an allowed host", async () => {
    const answer = await viaTunnel(`allowed.test:${port}`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*upstream saw allowed\.test:\d+\/tunnelled$/);
  });

  it("refuses a CONNECT authority that is not the host:port the allowlist checked", async () => {
    // As text this passes the allowed.test allowlist, names other.test, and hides the port in a path.
    const before = reached.length;
    for (const authority of [`allowed.test/.other.test:${port}`, `allowed.test@other.test:${port}`]) {
      const answer = await viaTunnel(authority);
      expect(answer.status, authority).toBe(403);
    }
    expect(reached.length).toBe(before);
    expect((await viaTunnel(`Allowed.Test:${port}`)).status).toBe(200);
  });

  it("allows subdomains of an allowlisted name, whatever the case", async () => {
    expect((await viaProxy(`http://api.allowed.test:${port}/sub`)).status).toBe(200);
    expect((await viaProxy(`http://API.Allowed.Test:${port}/case`)).status).toBe(200);
  });
});

describe("GuardProxy's allowlist", () => {
  it("refuses a host not on the allowlist with 403, and nothing reaches the upstream", async () => {
    const before = reached.length;
    const plain = await viaProxy(`http://other.test:${port}/secret`);
    expect(plain.status).toBe(403);
    expect(plain.body).toContain("other.test is not on the agent's egress allowlist");
    const tunnel = await viaTunnel(`other.test:${port}`);
    expect(tunnel.status).toBe(403);
    expect(tunnel.body).toContain("other.test is not on the agent's egress allowlist");
    expect(reached.length).toBe(before);
    expect(proxy.refused.at(-1)).toContain("other.test is not on the agent's egress allowlist");
  });

  it("does not take a name that merely ends like an allowlisted one", async () => {
    expect((await viaProxy(`http://notallowed.test:${port}/`)).status).toBe(403);
  });

  it("allows an IP literal only when it is listed literally", async () => {
    const answer = await viaProxy(`http://127.0.0.2:${port}/literal`);
    expect(answer.status).toBe(403);
    expect(answer.body).toContain("127.0.0.2 is not on the agent's egress allowlist");
  });
});

describe("GuardProxy's SSRF rule, for allowlisted hosts too", () => {
  it.each([
    ["evil.test", "127.0.0.1"],
    ["metadata.test", "169.254.169.254"],
  ])("refuses %s, which resolves to %s", async (host, address) => {
    const before = reached.length;
    const plain = await viaProxy(`http://${host}:${port}/`);
    expect(plain.status).toBe(403);
    expect(plain.body).toContain(`resolves to blocked IP ${address}`);
    const tunnel = await viaTunnel(`${host}:${port}`);
    expect(tunnel.status).toBe(403);
    expect(tunnel.body).toContain(`resolves to blocked IP ${address}`);
    expect(reached.length).toBe(before);
  });

  it.each(["127.0.0.1", "169.254.169.254"])("refuses the literal address %s", async (address) => {
    const plain = await viaProxy(`http://${address}:${port}/`);
    expect(plain.status).toBe(403);
    expect(plain.body).toMatch(/^SSRF protection: .* resolves to blocked IP /);
    const tunnel = await viaTunnel(`${address}:${port}`);
    expect(tunnel.status).toBe(403);
    expect(tunnel.body).toContain(`resolves to blocked IP ${address}`);
  });

  it("answers 502 when an allowed host cannot be resolved", async () => {
    const open = new GuardProxy(policy, { explainRefusals: true });
    const path = join(dir, "open.sock");
    await open.listenUnix(path);
    try {
      const answer = await viaProxy(`http://unknown.test:${port}/`, path);
      expect(answer.status).toBe(502);
      expect(answer.body).toContain("Could not resolve host unknown.test");
    } finally {
      await open.close();
    }
  });
});

describe("GuardProxy for the browser (no allowlist, refusals unexplained)", () => {
  it("drops a refused plain request without an answer and records the rule's message", async () => {
    const browser = new GuardProxy(policy);
    const path = join(dir, "browser.sock");
    await browser.listenUnix(path);
    try {
      expect((await viaProxy(`http://other.test:${port}/open`, path)).status).toBe(200);
      const answer = await viaProxy(`http://evil.test:${port}/`, path);
      expect(answer.error).toBeDefined();
      expect(browser.refused.at(-1)).toMatch(/^SSRF protection: .* resolves to blocked IP 127\.0\.0\.1$/);
    } finally {
      await browser.close();
    }
  });

  it("stops listening and removes its socket file on close", async () => {
    const closing = new GuardProxy(policy);
    const path = join(dir, "closing.sock");
    await closing.listenUnix(path);
    await closing.close();
    expect(() => statSync(path)).toThrow();
  });
});

describe("GuardProxy's forwarded requests", () => {
  it("ends the upstream request when its client goes away (a slow site holds no socket of the service)", async () => {
    let upstreamClosed: () => void = () => undefined;
    const closed = new Promise<void>((resolve) => (upstreamClosed = resolve));
    let arrived: () => void = () => undefined;
    const asked = new Promise<void>((resolve) => (arrived = resolve));
    // Answers nothing, ever: only the proxy can end the connection.
    const silent = createServer((req) => {
      req.socket.once("close", upstreamClosed);
      arrived();
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.2", resolve));
    const silentPort = (silent.address() as { port: number }).port;
    const forwarding = new GuardProxy(policy);
    const path = join(dir, "forwarding.sock");
    await forwarding.listenUnix(path);
    try {
      const req = request({ socketPath: path, path: `http://other.test:${silentPort}/slow` });
      req.on("error", () => undefined);
      req.end();
      await asked;
      req.destroy();
      await closed;
    } finally {
      await forwarding.close();
      silent.closeAllConnections();
      silent.close();
    }
  });
});
