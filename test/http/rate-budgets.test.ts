import { afterEach, describe, expect, it } from "vitest";
import { defaultRateLimits } from "../../src/config/env.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../helpers/fake-openai.ts";
import { json, startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer | undefined;
let fake: FakeOpenAI | undefined;
afterEach(async () => {
  await server?.close();
  await fake?.close();
  server = undefined;
  fake = undefined;
});

/** The real service with the default rate limits (the test helper switches them off), on a fake model. */
async function serverWithDefaultLimits(rateLimits = defaultRateLimits): Promise<TestServer> {
  fake = await startFakeOpenAI();
  server = await startTestServer({
    rateLimits,
    env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fake.baseUrl },
  });
  return server;
}

async function realmKey(on: TestServer): Promise<string> {
  const response = await on.request("/api/keys", { method: "POST", json: { realmId: "realm-default" } });
  expect(response.status).toBe(201);
  return (await json(response)).key;
}

function chat(on: TestServer, key?: string): Promise<Response> {
  return on.request("/v1/chat/completions", {
    method: "POST",
    json: { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] },
    ...(key ? { key } : {}),
  });
}

/** Runs `count` calls, `width` at a time, and returns their statuses. */
async function statusesOf(count: number, width: number, call: () => Promise<Response>): Promise<number[]> {
  const statuses: number[] = [];
  for (let start = 0; start < count; start += width) {
    const batch = Array.from({ length: Math.min(width, count - start) }, () =>
      call().then(async (response) => {
        await response.arrayBuffer();
        return response.status;
      }),
    );
    statuses.push(...(await Promise.all(batch)));
  }
  return statuses;
}

describe("rate limits under the default settings (DESIGN §6)", () => {
  it("never refuses an admin key browsing the console and calling the gateway: 250 reads and 100 chat completions in a minute", async () => {
    const on = await serverWithDefaultLimits();
    const started = Date.now();
    const reads = ["/api/health", "/api/agents", "/api/realms", "/api/keys", "/api/workflows"];
    let i = 0;
    const readStatuses = await statusesOf(250, 10, () => on.request(reads[i++ % reads.length] as string));
    expect(readStatuses.filter((status) => status === 429)).toEqual([]);
    expect(new Set(readStatuses)).toEqual(new Set([200]));
    const chatStatuses = await statusesOf(100, 10, () => chat(on));
    expect(chatStatuses.filter((status) => status !== 200)).toEqual([]);
    expect(Date.now() - started).toBeLessThan(60_000);
  }, 90_000);

  it("keeps the spec's per-address limit for realm keys and callers without a key, while the admin key goes on", async () => {
    const on = await serverWithDefaultLimits();
    const key = await realmKey(on);
    const statuses = await statusesOf(defaultRateLimits.read, 10, () => on.request("/api/health", { key }));
    expect(new Set(statuses)).toEqual(new Set([200]));
    const refused = await on.request("/api/health", { key });
    expect(refused.status).toBe(429);
    expect((await json(refused)).retryAfter).toBeGreaterThan(0);
    // The budget is the address's: a caller without a key from it is refused too, before the key check.
    expect((await on.request("/api/health", { key: null })).status).toBe(429);
    // The operator's admin key is not limited by default.
    expect((await on.request("/api/health")).status).toBe(200);
  }, 30_000);

  it("budgets the gateway per key: one key's exhausted budget leaves another key at the same address served", async () => {
    const on = await serverWithDefaultLimits({ ...defaultRateLimits, gateway: 2 });
    const [first, second] = [await realmKey(on), await realmKey(on)];
    expect([(await chat(on, first)).status, (await chat(on, first)).status]).toEqual([200, 200]);
    const refused = await chat(on, first);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("ratelimit-limit")).toBe("2");
    expect((await chat(on, second)).status).toBe(200);
    // The spec's classes are untouched by the gateway's traffic.
    expect((await on.request("/api/health", { key: first })).headers.get("ratelimit-limit")).toBe("200");
  }, 30_000);
});
