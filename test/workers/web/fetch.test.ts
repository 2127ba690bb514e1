import { once } from "node:events";
import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import type { Engine } from "../../../src/engine/engine.ts";
import { guardedRequest, type Resolver, USER_AGENT } from "../../../src/shared/net/guarded-request.ts";
import { registerWebTools, type WebToolsOptions } from "../../../src/workers/web/index.ts";
import { createTestEngine, deferred } from "../../helpers/engine.ts";
import { type LocalServer, startLocalServer } from "./local-server.ts";

/** The specification's message; the URL part is the hop being fetched. `_host` documents the target. */
const blocked = (address: string, _host: string) =>
  expect.stringMatching(
    new RegExp(
      `^SSRF protection: \\S+ resolves to blocked IP ${address.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`,
    ),
  );

let cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

function webEngine(options: Partial<WebToolsOptions> = {}): Engine {
  const engine = createTestEngine();
  registerWebTools(engine.worker("web"), { env: {}, ...options });
  cleanup.push(() => engine.shutdown());
  return engine;
}

async function server(handler: Parameters<typeof startLocalServer>[0], host?: string): Promise<LocalServer> {
  const started = await startLocalServer(handler, host);
  cleanup.push(() => started.close());
  return started;
}

const fetchTool = (engine: Engine, payload: Record<string, unknown>) =>
  engine.trigger({ function_id: "tool::web_fetch", payload }) as Promise<{
    url: string;
    status: number;
    contentType: string;
    content: string;
    truncated: boolean;
  }>;

const html = (res: ServerResponse, body: string, status = 200) => {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8" });
  res.end(body);
};

describe("tool::web_fetch refuses what it must not reach", () => {
  it("refuses loopback by IP, by name and by IPv6 literal; the server sees nothing", async () => {
    const local = await server((_req, res) => html(res, "reached"));
    const engine = webEngine();
    await expect(fetchTool(engine, { url: `http://127.0.0.1:${local.port}/` })).rejects.toMatchObject({
      status: 400,
      message: blocked("127.0.0.1", "127.0.0.1"),
    });
    await expect(fetchTool(engine, { url: `http://localhost:${local.port}/` })).rejects.toMatchObject({
      status: 400,
      message: expect.stringMatching(
        /^SSRF protection: http:\/\/localhost:\d+\/\S* resolves to blocked IP (127\.0\.0\.1|::1)$/,
      ),
    });
    await expect(fetchTool(engine, { url: `http://[::1]:${local.port}/` })).rejects.toMatchObject({
      status: 400,
      message: blocked("::1", "::1"),
    });
    await expect(fetchTool(engine, { url: `http://2130706433:${local.port}/` })).rejects.toMatchObject({
      message: blocked("127.0.0.1", "127.0.0.1"),
    });
    expect(local.requests).toHaveLength(0);
  });

  it("refuses ftp:// and file:// with the exact message", async () => {
    const engine = webEngine({ allowPrivateNetwork: true });
    for (const [url, protocol] of [
      ["ftp://example.com/file.txt", "ftp"],
      ["file:///etc/passwd", "file"],
    ]) {
      await expect(fetchTool(engine, { url })).rejects.toMatchObject({
        status: 400,
        message: `Protocol not allowed: ${protocol}`,
      });
    }
  });

  it("refuses a hostname when any of its addresses is blocked", async () => {
    const lookup: Resolver = async () => [
      { address: "203.0.113.9", family: 4 },
      { address: "10.0.0.5", family: 4 },
    ];
    await expect(fetchTool(webEngine({ lookup }), { url: "http://mixed.test/" })).rejects.toMatchObject({
      status: 400,
      message: blocked("10.0.0.5", "mixed.test"),
    });
  });

  it("checks the address the socket connects to: a rebinding resolver cannot reach the local server", async () => {
    const local = await server((_req, res) => html(res, "reached"));
    let calls = 0;
    // First answer public (what a separate pre-check would see), every later answer loopback.
    const lookup: Resolver = async () => [
      { address: calls++ === 0 ? "203.0.113.9" : "127.0.0.1", family: 4 },
    ];
    const engine = webEngine({ lookup, timeoutMs: 300 });
    await expect(fetchTool(engine, { url: `http://rebind.test:${local.port}/` })).rejects.toBeDefined();
    expect(calls).toBe(1);
    expect(local.requests).toHaveLength(0);
    // A second call resolves again and is refused on the loopback answer.
    await expect(fetchTool(engine, { url: `http://rebind.test:${local.port}/` })).rejects.toMatchObject({
      message: blocked("127.0.0.1", "rebind.test"),
    });
    expect(local.requests).toHaveLength(0);
  });

  it("re-checks every redirect target: address by literal and by name", async () => {
    const inner = await server((_req, res) => html(res, "inner secret"), "0.0.0.0");
    const outer = await server((req, res) => {
      const targets: Record<string, string> = {
        "/to-literal": `http://127.0.0.2:${inner.port}/`,
        "/to-name": `http://internal.test:${inner.port}/`,
        "/to-public": `http://public.test:${inner.port}/`,
        "/to-ftp": "ftp://example.com/",
      };
      res.writeHead(302, { location: targets[req.url ?? ""] ?? "/" });
      res.end();
    });
    const lookup: Resolver = async (host) => [
      { address: host === "internal.test" ? "127.0.0.2" : "127.0.0.1", family: 4 },
    ];
    // Only the exact address 127.0.0.1 is exempt, so the first hop (and public.test) are reachable.
    const engine = webEngine({ lookup, allowedAddresses: ["127.0.0.1"] });
    await expect(fetchTool(engine, { url: `${outer.origin}/to-literal` })).rejects.toMatchObject({
      status: 400,
      message: blocked("127.0.0.2", "127.0.0.2"),
    });
    await expect(fetchTool(engine, { url: `${outer.origin}/to-name` })).rejects.toMatchObject({
      status: 400,
      message: blocked("127.0.0.2", "internal.test"),
    });
    await expect(fetchTool(engine, { url: `${outer.origin}/to-ftp` })).rejects.toMatchObject({
      message: "Protocol not allowed: ftp",
    });
    expect(inner.requests).toHaveLength(0);
    const reached = await fetchTool(engine, { url: `${outer.origin}/to-public` });
    expect(reached).toMatchObject({ url: `http://public.test:${inner.port}/`, content: "inner secret" });
    expect(inner.requests).toHaveLength(1);
  });

  it("names the host on network and resolution failures", async () => {
    const closed = await startLocalServer(() => {});
    await closed.close();
    const engine = webEngine({
      allowPrivateNetwork: true,
      lookup: async (host) => {
        if (host === "nowhere.test")
          throw Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" });
        return [{ address: "127.0.0.1", family: 4 }];
      },
    });
    await expect(fetchTool(engine, { url: `http://127.0.0.1:${closed.port}/` })).rejects.toMatchObject({
      status: 503,
      message: expect.stringMatching(/^Request to 127\.0\.0\.1 failed: .*ECONNREFUSED/),
    });
    await expect(fetchTool(engine, { url: "http://nowhere.test/" })).rejects.toMatchObject({
      status: 503,
      message: "Could not resolve host nowhere.test: ENOTFOUND",
    });
  });

  it("validates its input strictly", async () => {
    const engine = webEngine();
    await expect(fetchTool(engine, { url: "http://example.com", maxSize: 0 })).rejects.toMatchObject({
      status: 400,
    });
    await expect(fetchTool(engine, { url: "http://example.com", maxSize: 1.5 })).rejects.toMatchObject({
      status: 400,
    });
    await expect(fetchTool(engine, { url: "http://example.com", maxSize: 10_000_001 })).rejects.toMatchObject(
      {
        status: 400,
      },
    );
    await expect(fetchTool(engine, { url: "http://example.com", extra: 1 })).rejects.toMatchObject({
      status: 400,
    });
    await expect(fetchTool(engine, { url: "not a url" })).rejects.toMatchObject({
      status: 400,
      message: "Invalid URL: not a url",
    });
  });
});

describe("tool::web_fetch against a local server (private network allowed)", () => {
  it("converts HTML to text and sends the fixed User-Agent", async () => {
    const local = await server((_req, res) =>
      html(
        res,
        `<html><head><style>p { color: red }</style><script>alert("x")</script></head>
         <body><p>Hello&nbsp;<b>world</b> &amp; friends &lt;3&gt;</p></body></html>`,
      ),
    );
    const result = await fetchTool(webEngine({ allowPrivateNetwork: true }), { url: `${local.origin}/page` });
    expect(result).toEqual({
      url: `${local.origin}/page`,
      status: 200,
      contentType: "text/html; charset=utf-8",
      content: "Hello world & friends <3>",
      truncated: false,
    });
    expect(local.requests[0].headers["user-agent"]).toBe(USER_AGENT);
    expect(USER_AGENT).toBe("AgentOS/0.0.1");
  });

  it("returns non-HTML bodies as they are, and non-2xx statuses as results", async () => {
    const local = await server((req, res) => {
      res.writeHead(req.url === "/missing" ? 404 : 200, { "content-type": "text/plain" });
      res.end(req.url === "/missing" ? "not <b>here</b>" : "  plain  ");
    });
    const engine = webEngine({ allowPrivateNetwork: true });
    expect(await fetchTool(engine, { url: `${local.origin}/missing` })).toMatchObject({
      status: 404,
      contentType: "text/plain",
      content: "not <b>here</b>",
    });
    expect((await fetchTool(engine, { url: `${local.origin}/` })).content).toBe("  plain  ");
  });

  it("cuts the body at maxSize and closes the connection early", async () => {
    const closedEarly = deferred<{ early: boolean; written: number }>();
    const chunk = Buffer.alloc(64 * 1024, "a");
    const total = 200;
    const local = await server(async (_req, res) => {
      let written = 0;
      const closed = once(res, "close");
      res.on("close", () => closedEarly.resolve({ early: !res.writableFinished, written }));
      res.writeHead(200, { "content-type": "text/plain" });
      for (let i = 0; i < total && !res.destroyed; i++) {
        written += chunk.length;
        if (!res.write(chunk)) await Promise.race([once(res, "drain"), closed]);
      }
      res.end();
    });
    const result = await fetchTool(webEngine({ allowPrivateNetwork: true }), {
      url: local.origin,
      maxSize: 1000,
    });
    expect(result.truncated).toBe(true);
    expect(result.content).toBe("a".repeat(1000));
    const { early, written } = await closedEarly.promise;
    expect(early).toBe(true);
    expect(written).toBeLessThan(total * chunk.length);
  });

  it("is not truncated at exactly maxSize, and drops a half character at the cut", async () => {
    const local = await server((req, res) => {
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
      res.end(req.url === "/exact" ? "x".repeat(100) : "é".repeat(100));
    });
    const engine = webEngine({ allowPrivateNetwork: true });
    expect(await fetchTool(engine, { url: `${local.origin}/exact`, maxSize: 100 })).toMatchObject({
      content: "x".repeat(100),
      truncated: false,
    });
    expect(await fetchTool(engine, { url: `${local.origin}/exact`, maxSize: 99 })).toMatchObject({
      content: "x".repeat(99),
      truncated: true,
    });
    expect(await fetchTool(engine, { url: `${local.origin}/accents`, maxSize: 9 })).toMatchObject({
      content: "éééé",
      truncated: true,
    });
  });

  it("follows up to 5 redirects and stops a loop", async () => {
    const local = await server((req, res) => {
      const hops = /^\/hops\/(\d+)$/.exec(req.url ?? "");
      if (hops && Number(hops[1]) > 0) {
        res.writeHead(Number(hops[1]) % 2 === 0 ? 301 : 307, { location: `/hops/${Number(hops[1]) - 1}` });
        res.end();
      } else if (req.url === "/loop") {
        res.writeHead(302, { location: "/loop" });
        res.end();
      } else html(res, `<p>arrived at ${req.url}</p>`);
    });
    const engine = webEngine({ allowPrivateNetwork: true });
    expect(await fetchTool(engine, { url: `${local.origin}/hops/5` })).toMatchObject({
      url: `${local.origin}/hops/0`,
      status: 200,
      content: "arrived at /hops/0",
    });
    await expect(fetchTool(engine, { url: `${local.origin}/hops/6` })).rejects.toMatchObject({
      message: "Too many redirects: stopped after 5",
    });
    const before = local.requests.length;
    await expect(fetchTool(engine, { url: `${local.origin}/loop` })).rejects.toMatchObject({
      status: 422,
      message: "Too many redirects: stopped after 5",
    });
    expect(local.requests.length - before).toBe(6);
  });

  it("times out (the 30 s limit is configurable) whether headers or body are slow", async () => {
    const local = await server((req, res) => {
      if (req.url === "/slow-body") {
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("start");
      }
      // Never ends; closed by the test cleanup.
    });
    const engine = webEngine({ allowPrivateNetwork: true, timeoutMs: 200 });
    for (const path of ["/silent", "/slow-body"]) {
      const started = Date.now();
      await expect(fetchTool(engine, { url: `${local.origin}${path}` })).rejects.toMatchObject({
        status: 504,
        message: "Request to 127.0.0.1 timed out after 200 ms",
      });
      expect(Date.now() - started).toBeLessThan(2000);
    }
  });
});

describe("guardedRequest redirects", () => {
  it("drops credential headers and refuses to resend a body across origins; 303 turns POST into GET", async () => {
    const other = await server((_req, res) => html(res, "other"));
    const first = await server((req, res) => {
      const location = req.url === "/see-other" ? "/landing" : `${other.origin}${req.url}`;
      res.writeHead(req.url === "/keep" ? 307 : 303, { location });
      res.end();
    });
    const policy = { allowPrivateNetwork: true, resolve: async () => [] };
    const headers = { "x-subscription-token": "secret-token" };
    await guardedRequest(`${first.origin}/cross`, { headers, maxBytes: 1000, policy });
    expect(other.requests[0].headers["x-subscription-token"]).toBeUndefined();
    expect(other.requests[0].headers["user-agent"]).toBe(USER_AGENT);
    await expect(
      guardedRequest(`${first.origin}/keep`, { method: "POST", body: "{}", headers, maxBytes: 1000, policy }),
    ).rejects.toMatchObject({
      message: `Refusing to resend the request body to 127.0.0.1:${other.port} on redirect`,
    });
    await guardedRequest(`${first.origin}/see-other`, {
      method: "POST",
      body: "{}",
      headers,
      maxBytes: 1000,
      policy,
    });
    expect(first.requests.at(-1)).toMatchObject({ method: "GET", url: "/landing", body: "" });
    expect(first.requests.at(-1)?.headers["x-subscription-token"]).toBe("secret-token");
  });
});
