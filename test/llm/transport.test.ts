import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { UpstreamStatusError } from "../../src/llm/provider-errors.ts";
import { postWithRetries, readAll, retryAfterOf } from "../../src/llm/transport.ts";

describe("retryAfterOf", () => {
  const wait = (headers: Record<string, string>) => retryAfterOf({ headers });

  it("takes retry-after-ms first, then retry-after in seconds", () => {
    expect(wait({ "retry-after-ms": "250", "retry-after": "9" })).toBe(250);
    expect(wait({ "retry-after": "1.5" })).toBe(1500);
  });

  it("reads retry-after as an HTTP date, from now", () => {
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString();
    expect(wait({ "retry-after": inTenSeconds })).toBeGreaterThan(8_000);
    expect(wait({ "retry-after": inTenSeconds })).toBeLessThanOrEqual(10_000);
  });

  it("ignores a wait past a minute, in the past, or unreadable (the backoff applies)", () => {
    expect(wait({ "retry-after": "61" })).toBeUndefined();
    expect(wait({ "retry-after": new Date(Date.now() - 5_000).toUTCString() })).toBeUndefined();
    expect(wait({ "retry-after": "soon" })).toBeUndefined();
    expect(wait({})).toBeUndefined();
  });
});

describe("postWithRetries", () => {
  let close: (() => void) | undefined;
  afterEach(() => close?.());

  /** A server answering each POST with the next status (200 once they run out), counting the calls. */
  async function serverAnswering(statuses: Array<{ status: number; headers?: Record<string, string> }>) {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => {
        seen.push(body);
        const next = statuses.shift() ?? { status: 200 };
        res.writeHead(next.status, { "content-type": "application/json", ...next.headers });
        res.end(
          JSON.stringify(next.status < 300 ? { ok: true } : { error: { message: `no (${next.status})` } }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    close = () => server.close();
    const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`);
    return { url, seen };
  }

  const request = (url: URL, maxRetries: number) => ({
    url,
    headers: { "content-type": "application/json" },
    payload: '{"model":"m"}',
    timeoutMs: 5_000,
    maxRetries,
    detailOf: (body: string) => (JSON.parse(body) as { error: { message: string } }).error.message,
  });

  it("sends the payload again after each 429 and 5xx, as soon as Retry-After says, until a 2xx", async () => {
    const { url, seen } = await serverAnswering([
      { status: 429, headers: { "retry-after-ms": "0" } },
      { status: 503, headers: { "retry-after": "0" } },
    ]);
    const call = await postWithRetries(request(url, 2));
    expect(call.response.statusCode).toBe(200);
    expect(await readAll(call.response.body)).toBe('{"ok":true}');
    call.done();
    expect(seen).toEqual(['{"model":"m"}', '{"model":"m"}', '{"model":"m"}']);
  });

  it("throws the provider's status and words once the retries are spent, or at once for a 4xx", async () => {
    const spent = await serverAnswering([
      { status: 500, headers: { "retry-after": "0" } },
      { status: 502, headers: { "retry-after": "0" } },
    ]);
    const failure = await postWithRetries(request(spent.url, 1)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UpstreamStatusError);
    expect(failure).toMatchObject({ statusCode: 502, detail: "no (502)" });
    close?.();
    const refused = await serverAnswering([{ status: 400 }]);
    await expect(postWithRetries(request(refused.url, 3))).rejects.toMatchObject({ statusCode: 400 });
    expect(refused.seen).toHaveLength(1);
  });

  it("gives up at the deadline with a TimeoutError, and with the caller's reason when it aborts", async () => {
    const { url } = await serverAnswering([{ status: 503, headers: { "retry-after": "30" } }]);
    await expect(postWithRetries({ ...request(url, 3), timeoutMs: 100 })).rejects.toMatchObject({
      name: "TimeoutError",
    });
    const reason = new Error("the turn was stopped");
    await expect(postWithRetries({ ...request(url, 3), signal: AbortSignal.abort(reason) })).rejects.toBe(
      reason,
    );
  });
});
