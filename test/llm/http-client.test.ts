import http from "node:http";
import type { AddressInfo } from "node:net";
import { createAnthropic } from "@ai-sdk/anthropic";
import { generateText } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AnswerTooLargeError, keepAliveFetch, MAX_ANSWER_BYTES } from "../../src/llm/http-client.ts";

let server: http.Server;
let base: string;
/** Requests to /huge (and /messages), and how many of their answers were cut off before their end. */
const huge = { requests: 0, cut: 0 };

beforeAll(async () => {
  server = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      if (request.url === "/json") {
        response.setHeader("content-type", "application/json");
        response.setHeader("x-echo", String(request.headers["x-test"]));
        response.end(JSON.stringify({ method: request.method, body }));
      } else if (request.url === "/events") {
        response.writeHead(200, { "content-type": "text/event-stream" });
        response.write("data: one\n\n");
        setTimeout(() => response.end("data: two\n\n"), 20);
      } else if (request.url === "/empty") {
        response.writeHead(204).end();
      } else if (request.url?.endsWith("/huge") || request.url?.endsWith("/messages")) {
        // A provider's answer that does not end: more than MAX_ANSWER_BYTES of one JSON value.
        huge.requests++;
        response.writeHead(200, { "content-type": "application/json" });
        response.write('{"content":"');
        const chunk = Buffer.alloc(1024 * 1024, "x");
        let sent = 0;
        response.on("close", () => {
          if (!response.writableFinished) huge.cut++;
        });
        const pump = () => {
          while (sent < MAX_ANSWER_BYTES + 8 * chunk.length) {
            sent += chunk.length;
            if (!response.write(chunk)) return void response.once("drain", pump);
          }
          response.end('"}');
        };
        pump();
      } else if (request.url === "/slow") {
        setTimeout(() => response.end("late"), 2000);
      } else {
        response.writeHead(404, { "content-type": "text/plain" }).end("no such thing");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("keepAliveFetch", () => {
  it("sends the method, headers and body, and answers status, headers and the whole body", async () => {
    const response = await keepAliveFetch(`${base}/json`, {
      method: "POST",
      headers: new Headers({ "x-test": "yes", "content-type": "application/json" }),
      body: '{"a":1}',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-echo")).toBe("yes");
    expect(await response.json()).toEqual({ method: "POST", body: '{"a":1}' });
  });

  it("passes an event stream on as it arrives", async () => {
    const response = await keepAliveFetch(`${base}/events`, { method: "GET" });
    expect(await response.text()).toBe("data: one\n\ndata: two\n\n");
  });

  it("answers a 204 without a body and an error status with its text", async () => {
    expect((await keepAliveFetch(`${base}/empty`)).status).toBe(204);
    const missing = await keepAliveFetch(`${base}/nothing`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toBe("no such thing");
  });

  it("stops reading an answer past MAX_ANSWER_BYTES, which the AI SDK then neither retries nor holds", async () => {
    const failure = await keepAliveFetch(`${base}/huge`, { method: "POST", body: "{}" }).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(AnswerTooLargeError);
    expect((failure as Error).message).toBe("the provider's answer is larger than 64 MB");
    const model = createAnthropic({ apiKey: "k", baseURL: `${base}/v1`, fetch: keepAliveFetch })("claude");
    await expect(generateText({ model, prompt: "hi", maxRetries: 2 })).rejects.toBeInstanceOf(
      AnswerTooLargeError,
    );
    expect(huge.requests).toBe(2);
    await expect.poll(() => huge.cut).toBe(2);
  });

  it("fails as fetch does: the abort reason when aborted, TypeError 'fetch failed' when unreachable", async () => {
    const reason = new Error("gave up");
    const controller = new AbortController();
    setTimeout(() => controller.abort(reason), 50);
    await expect(keepAliveFetch(`${base}/slow`, { signal: controller.signal })).rejects.toBe(reason);
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const failure = await keepAliveFetch(`http://127.0.0.1:${port}/`).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TypeError);
    expect((failure as TypeError).message).toBe("fetch failed");
    expect(String(((failure as TypeError).cause as Error).message)).toMatch(/ECONNREFUSED/);
  });
});
