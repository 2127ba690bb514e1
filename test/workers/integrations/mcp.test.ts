import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { NetworkPolicy } from "../../../src/shared/net/guarded-request.ts";
import {
  MAX_DESCRIPTION_CHARS,
  MAX_LINE_BYTES,
  MAX_LISTED_CHARS,
  MAX_MESSAGE_BYTES,
  MAX_TOOLS,
  McpConnection,
} from "../../../src/workers/integrations/mcp.ts";
import { integrationFile } from "../../../src/workers/integrations/schema.ts";
import { MAX_DEPTH } from "../../../src/workers/integrations/schema-refs.ts";

type Rpc = { id?: number; method: string; params?: Record<string, unknown> };
type Handler = (message: Rpc, response: ServerResponse) => void;

/**
 * A hostile MCP server over streamable HTTP, written by hand (no SDK): it answers initialize itself and
 * every other request with `handle`.
 */
async function hostileServer(handle: Handler, onGet?: Handler): Promise<{ url: string; close(): void }> {
  const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    if (request.method === "GET" && onGet) return onGet({ method: "GET" }, response);
    if (request.method !== "POST") return void response.writeHead(405).end();
    let body = "";
    for await (const chunk of request) body += chunk;
    const message = JSON.parse(body) as Rpc;
    if (message.id === undefined) return void response.writeHead(202).end();
    if (message.method === "initialize")
      return answer(response, message, {
        protocolVersion: message.params?.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "hostile", version: "1" },
      });
    handle(message, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: () => server.close(),
  };
}

function answer(response: ServerResponse, message: Rpc, result: unknown): void {
  response.writeHead(200, { "content-type": "application/json" });
  response.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
}

const tool = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: `${name} of the hostile server`,
  inputSchema: { type: "object", properties: {} },
  ...extra,
});

const open: NetworkPolicy = { allowPrivateNetwork: true, resolve: async () => [] };

function connection(url: string, policy = open, timeoutMs = 60_000): McpConnection {
  const server = integrationFile.parse({ mcp: { url, timeout_ms: timeoutMs } }).mcp;
  if (!server) throw new Error("no mcp");
  return new McpConnection("hostile", server, {}, policy);
}

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0)) await step();
});

async function connect(handle: Handler, policy = open, timeoutMs = 60_000) {
  const server = await hostileServer(handle);
  const mcp = connection(server.url, policy, timeoutMs);
  cleanup.push(
    () => server.close(),
    () => mcp.close(),
  );
  return mcp;
}

describe("an MCP server over HTTP", () => {
  it("serves the SDK's own server, answers streamed as events, through the guards", async () => {
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => "session-1" });
    const mcp = new McpServer({ name: "echo", version: "1.0.0" });
    mcp.registerTool(
      "echo",
      { description: "Says it back", inputSchema: { text: z.string() }, outputSchema: { said: z.string() } },
      async ({ text }) => ({ content: [{ type: "text", text }], structuredContent: { said: text } }),
    );
    await mcp.connect(transport);
    const http = createServer((request, response) => void transport.handleRequest(request, response));
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const client = connection(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
    cleanup.push(
      () => client.close(),
      () => mcp.close(),
      () => http.close(),
    );
    expect((await client.open()).map((listed) => listed.name)).toEqual(["echo"]);
    await expect(client.call("echo", { text: "hi" })).resolves.toEqual({
      text: "hi",
      content: [{ type: "text", text: "hi" }],
      structured: { said: "hi" },
    });
  });
});

describe("a hostile MCP server over HTTP", () => {
  it("refuses a tool list over the limit and cuts long descriptions", async () => {
    const many = await connect((message, response) =>
      answer(response, message, { tools: Array.from({ length: MAX_TOOLS + 1 }, (_, n) => tool(`t${n}`)) }),
    );
    await expect(many.open()).rejects.toThrow(`lists more than ${MAX_TOOLS} tools`);

    const wordy = await connect((message, response) =>
      answer(response, message, { tools: [tool("t", { description: "d".repeat(1_000_000) })] }),
    );
    const [listed] = await wordy.open();
    expect(listed?.description).toHaveLength(MAX_DESCRIPTION_CHARS);

    // Each property of a schema becomes a validator held here: all of them together are bounded too.
    const properties = Object.fromEntries(
      Array.from({ length: 3000 }, (_, n) => [`p${n}`, { type: "string" }]),
    );
    const large = await connect((message, response) =>
      answer(response, message, {
        tools: Array.from({ length: 10 }, (_, n) =>
          tool(`t${n}`, { inputSchema: { type: "object", properties } }),
        ),
      }),
    );
    await expect(large.open()).rejects.toThrow(`over ${MAX_LISTED_CHARS} characters`);
  });

  it("refuses an input schema whose $ref loops or multiplies, naming the server and the tool", async () => {
    const listing = (inputSchema: Record<string, unknown>) =>
      connect((message, response) => answer(response, message, { tools: [tool("looped", { inputSchema })] }));
    // Each of these made every call's validation overflow the stack (a 500 for each call).
    const loops = [
      { type: "object", $ref: "#" },
      { type: "object", allOf: [{ $ref: "#" }] },
      {
        type: "object",
        properties: { a: { $ref: "#/$defs/x" } },
        $defs: { x: { $ref: "#/$defs/y" }, y: { anyOf: [{ type: "string" }, { $ref: "#/$defs/x" }] } },
      },
    ];
    for (const schema of loops)
      await expect((await listing(schema)).open()).rejects.toThrow(
        /MCP server of hostile: the input schema of looped refers to itself through \$ref/,
      );
    // Thirty references doubling at each step: one argument checked 2^30 times, the service held for minutes.
    const $defs: Record<string, unknown> = { a30: { type: "string" } };
    for (let n = 0; n < 30; n++)
      $defs[`a${n}`] = { anyOf: [{ $ref: `#/$defs/a${n + 1}` }, { $ref: `#/$defs/a${n + 1}` }] };
    const doubling = await listing({ type: "object", properties: { q: { $ref: "#/$defs/a0" } }, $defs });
    await expect(doubling.open()).rejects.toThrow(
      /input schema of looped checks one value against more than/,
    );
    // The check walks the schema: one nested deeper than any tool's arguments is refused, not walked.
    let deep: Record<string, unknown> = { type: "string" };
    for (let n = 0; n < MAX_DEPTH; n++) deep = { type: "object", properties: { a: deep } };
    await expect((await listing(deep)).open()).rejects.toThrow(`nests schemas more than ${MAX_DEPTH} deep`);
    // A schema recursive through its properties (a tree) checks each value once: it is served.
    const tree = await listing({
      type: "object",
      properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#" } } },
    });
    await expect(tree.open()).resolves.toHaveLength(1);
  });

  it("ends an answer that never ends at the message limit, and the read with it", async () => {
    let closed = false;
    const mcp = await connect((message, response) => {
      if (message.method === "tools/list") return answer(response, message, { tools: [tool("t")] });
      response.writeHead(200, { "content-type": "application/json" });
      response.write(`{"jsonrpc":"2.0","id":${message.id},"result":{"content":[{"type":"text","text":"`);
      const chunk = "x".repeat(1 << 20);
      const timer = setInterval(() => response.write(chunk), 2);
      response.on("close", () => {
        closed = true;
        clearInterval(timer);
      });
    });
    await mcp.open();
    await expect(mcp.call("t", {})).rejects.toThrow(`more than ${MAX_MESSAGE_BYTES} bytes`);
    await expect.poll(() => closed, { timeout: 5000 }).toBe(true);
  });

  it("stops reading a stream that never answers once the call has timed out", async () => {
    let closed = false;
    const mcp = await connect(
      (message, response) => {
        if (message.method === "tools/list") return answer(response, message, { tools: [tool("t")] });
        // An event stream that keeps sending notifications and never the answer.
        response.writeHead(200, { "content-type": "text/event-stream" });
        const note = `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"${"y".repeat(1000)}"}}\n\n`;
        const timer = setInterval(() => response.write(note), 5);
        response.on("close", () => {
          closed = true;
          clearInterval(timer);
        });
      },
      open,
      500,
    );
    await mcp.open();
    await expect(mcp.call("t", {})).rejects.toThrow(/timed out/);
    await expect.poll(() => closed, { timeout: 3000 }).toBe(true);
  });

  it("does not run the server's output schema patterns on its structured content (ReDoS)", async () => {
    const mcp = await connect((message, response) => {
      if (message.method === "tools/list")
        return answer(response, message, {
          tools: [
            tool("t", {
              outputSchema: { type: "object", properties: { q: { type: "string", pattern: "^(a+)+$" } } },
            }),
          ],
        });
      // Content the pattern refuses (on "a…a!" a catastrophic backtracking pattern would hold the whole
      // service for seconds): passed on as data, since output schemas are not compiled here.
      answer(response, message, {
        content: [{ type: "text", text: "done" }],
        structuredContent: { q: "a!" },
      });
    });
    await mcp.open();
    await expect(mcp.call("t", {})).resolves.toMatchObject({ text: "done" });
  });

  it("does not open the standalone event stream, which only a flood of unasked messages would use", async () => {
    let streams = 0;
    const server = await hostileServer(
      (message, response) => answer(response, message, { tools: [tool("t")] }),
      (_message, response) => {
        streams++;
        response.writeHead(200, { "content-type": "text/event-stream" });
        const note = `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"y"}}\n\n`;
        const timer = setInterval(() => response.write(note.repeat(100)), 1);
        response.on("close", () => clearInterval(timer));
      },
    );
    const mcp = connection(server.url);
    cleanup.push(
      () => server.close(),
      () => mcp.close(),
    );
    await mcp.open();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(streams).toBe(0);
  });
});

describe("a hostile MCP server over stdio", () => {
  it("is stopped once a line passes the limit, with an error saying so", async () => {
    const server = integrationFile.parse({
      mcp: {
        command: process.execPath,
        args: [join(import.meta.dirname, "../../fixtures/mcp/flood-server.mjs")],
        env: { FLOOD_BYTES: String(MAX_LINE_BYTES + 1024 * 1024) },
      },
    }).mcp;
    if (!server) throw new Error("no mcp");
    const mcp = new McpConnection("flood", server, {}, open);
    cleanup.push(() => mcp.close());
    await expect(mcp.open()).rejects.toThrow(
      `mcp::flood::tools/list failed: MCP server ${process.execPath} of flood sent a line of more than ${MAX_LINE_BYTES} bytes: stopped`,
    );
  });
});

describe("the SSRF rule for an MCP server's URL", () => {
  const closed: NetworkPolicy = {
    allowPrivateNetwork: false,
    resolve: async (host) => [{ address: host === "mcp.example.com" ? "169.254.169.254" : host, family: 4 }],
  };

  it("refuses a loopback address, and a name that resolves to a metadata address", async () => {
    const server = await hostileServer((message, response) => answer(response, message, { tools: [] }));
    cleanup.push(() => server.close());
    const loopback = connection(server.url, closed);
    cleanup.push(() => loopback.close());
    await expect(loopback.open()).rejects.toThrow(/SSRF protection: .*blocked IP 127\.0\.0\.1/);

    const rebound = connection("http://mcp.example.com/mcp", closed);
    cleanup.push(() => rebound.close());
    await expect(rebound.open()).rejects.toThrow(/SSRF protection: .*blocked IP 169\.254\.169\.254/);
  });

  it("names a server that did not connect without the credentials or query of its URL", async () => {
    // The integration's error is shown to realm keys (GET /api/integrations).
    for (const [url, policy] of [
      ["http://admin:pa55word@127.0.0.1:1/mcp?token=s3cret", open],
      ["http://admin:pa55word@127.0.0.1:1/mcp?token=s3cret", closed],
    ] as const) {
      const failing = connection(url, policy, 2000);
      cleanup.push(() => failing.close());
      const error = await failing.open().catch((failure: Error) => failure);
      expect(String(error)).toMatch(/did not connect/);
      expect(String(error)).not.toMatch(/pa55word|s3cret/);
    }
  });
});
