import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolsServer } from "./setup.ts";

const env = toolsServer();
const blocked = toolsServer({ AGENTOS_ALLOW_PRIVATE_NETWORK: "0" });
let site: Server;
let base = "";
let flaky = 0;

beforeAll(async () => {
  site = createServer((req, res) => {
    if (req.url === "/json")
      return void res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ method: req.method, ok: true }));
    if (req.url === "/flaky") return void res.writeHead(flaky++ < 1 ? 503 : 200).end("finally");
    if (req.url === "/echo") {
      let body = "";
      req
        .on("data", (chunk) => (body += chunk))
        .on("end", () =>
          res
            .writeHead(201, { "content-type": "application/json" })
            .end(JSON.stringify({ got: JSON.parse(body), type: req.headers["content-type"] })),
        );
      return;
    }
    if (req.url === "/cat.png" || req.url === "/bad%E0%A4%A")
      return void res
        .writeHead(200, { "content-type": "image/png" })
        .end(Buffer.from("89504e470d0a1a0a", "hex"));
    res.writeHead(404).end("no");
  });
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => site.close(() => resolve())));

describe("HTTP and media tools", () => {
  it("calls an API, parses JSON, sends JSON bodies and retries a 503", async () => {
    expect(await env.tool("tool::api_call", { url: `${base}/json` })).toMatchObject({
      status: 200,
      body: { method: "GET", ok: true },
    });
    expect(
      await env.tool("tool::api_call", { url: `${base}/echo`, method: "POST", body: { a: 1 } }),
    ).toMatchObject({ status: 201, body: { got: { a: 1 }, type: "application/json" } });
    expect(await env.tool("tool::api_call", { url: `${base}/flaky`, retries: 2 })).toMatchObject({
      status: 200,
      body: "finally",
      attempts: 2,
    });
  });

  it("refuses private addresses unless the service allows them", async () => {
    const refused = await blocked.failure("tool::api_call", { url: `${base}/json` });
    expect(refused.message).toContain("SSRF protection");
    expect((await blocked.failure("tool::network_check", { host: "127.0.0.1", port: 80 })).message).toContain(
      "SSRF protection",
    );
  });

  it("reports a closed port as unreachable and an open one as reachable", async () => {
    const port = Number(new URL(base).port);
    expect(await env.tool("tool::network_check", { host: "127.0.0.1", port })).toMatchObject({
      reachable: true,
      address: "127.0.0.1",
    });
    const closed = await env.tool<{ reachable: boolean; error: string }>("tool::network_check", {
      host: "127.0.0.1",
      port: 1,
      timeoutMs: 1000,
    });
    expect(closed.reachable).toBe(false);
    expect(closed.error).toMatch(/ECONNREFUSED/);
  });

  it("downloads into the workspace and transcribes and speaks through the speech provider", async () => {
    await env.agent();
    expect(await env.tool("tool::media_download", { url: `${base}/cat.png`, path: "img/cat.png" })).toEqual({
      path: "img/cat.png",
      bytes: 8,
      contentType: "image/png",
    });
    expect((await env.failure("tool::media_download", { url: `${base}/missing` })).message).toContain(
      "answered 404",
    );
    // A file name whose escapes are not UTF-8 is kept as written (it was a URIError, a 500).
    expect(await env.tool("tool::media_download", { url: `${base}/bad%E0%A4%A` })).toMatchObject({
      path: "bad%E0%A4%A",
      bytes: 8,
    });
    const spoken = await env.tool<{ path: string; bytes: number }>("tool::tts_speak", {
      text: "hello",
      path: "hello.mp3",
    });
    expect(spoken).toMatchObject({ path: "hello.mp3", provider: "openai" });
    expect(await env.tool("tool::audio_transcribe", { path: "hello.mp3" })).toMatchObject({
      text: expect.stringMatching(/^heard \d+ bytes$/),
      provider: "openai",
    });
  });

  it("composes tools, piping each result into the next step's arguments", async () => {
    await env.agent();
    const result = await env.tool<{ output: unknown }>("tool::compose", {
      input: { name: "notes.txt" },
      steps: [
        { tool: "tool::file_write", args: { path: "{{input.name}}", content: "b\na\n" } },
        { tool: "tool::file_read", args: { path: "{{prev.path}}" } },
        { tool: "tool::hash_compute", args: { text: "{{prev.content}}" } },
      ],
    });
    expect(result.output).toEqual({ algorithm: "sha256", hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(
      (await env.failure("tool::compose", { steps: [{ tool: "agent::delete", args: {} }] })).status,
    ).toBe(400);
  });

  it("refuses in compose a tool the agent may not call", async () => {
    await env.agent({ toolProfile: "chat" });
    expect(
      (await env.failure("tool::compose", { steps: [{ tool: "tool::shell_exec", args: { command: "ls" } }] }))
        .message,
    ).toContain("may not call tool::shell_exec");
  });
});
