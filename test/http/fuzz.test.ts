import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SECURITY_HEADERS, securityHeadersOf, startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const routes = [
  ["GET", "/api/health"],
  ["GET", "/api/openapi.json"],
  ["GET", "/api/keys"],
  ["POST", "/api/keys"],
  ["DELETE", "/api/keys/key_0123456789abcdef"],
  ["GET", "/api/audit"],
  ["GET", "/api/vault"],
  ["POST", "/api/vault"],
  ["DELETE", "/api/vault/some-name"],
  ["POST", "/api/unknown/route"],
  ["PUT", "/api/health"],
] as const;

const jsonBody = fc.oneof(
  fc.jsonValue({ maxDepth: 6 }),
  fc.dictionary(
    fc.constantFrom("name", "realmId", "key", "value", "id", "limit", "cursor", "type"),
    fc.jsonValue(),
  ),
);

const rawBody = fc.oneof(
  fc.string({ unit: "binary", maxLength: 200 }),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
  fc.constantFrom('{"a":', "[".repeat(3000), '{"__proto__":{"x":1}}', "\u0000", "\ud800"),
);

async function expectWellFormed(response: Response): Promise<void> {
  expect(response.status).toBeLessThan(500);
  expect(securityHeadersOf(response)).toEqual(SECURITY_HEADERS);
  await response.arrayBuffer();
}

describe("random input at the routes", () => {
  it("never answers 500 to random JSON and always sends the security headers", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), jsonBody, async ([method, path], body) => {
        const init = method === "GET" || method === "DELETE" ? { method } : { method, json: body };
        await expectWellFormed(await server.request(path, init));
      }),
      { numRuns: 150 },
    );
  });

  it("never answers 500 to random bytes, broken UTF-8 or hostile JSON", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes.filter(([m]) => m !== "GET")),
        rawBody,
        async ([method, path], body) => {
          const response = await server.request(path, {
            method,
            body,
            headers: { "content-type": "application/json" },
          });
          await expectWellFormed(response);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("never answers 500 to random query strings and path segments", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 50 }), fc.string({ maxLength: 50 }), async (segment, query) => {
        const path = `/api/keys/${encodeURIComponent(segment)}?${encodeURIComponent(query)}=${encodeURIComponent(segment)}`;
        await expectWellFormed(await server.request(path, { method: "DELETE" }));
        await expectWellFormed(await server.request(`/api/audit?limit=${encodeURIComponent(query)}`));
      }),
      { numRuns: 100 },
    );
  });

  it("never answers 2xx without a key, however the path is spelled", async () => {
    const segment = fc.constantFrom(
      "api",
      "%61pi",
      "API",
      "v1",
      "keys",
      "vault",
      "audit",
      "health",
      "",
      ".",
      "..",
      "%2F",
    );
    const path = fc.array(segment, { minLength: 1, maxLength: 5 }).map((parts) => `/${parts.join("/")}`);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("GET", "POST", "DELETE", "HEAD"), path, async (method, target) => {
        // Not following redirects: `/` leads to the console, whose page (no data) needs no key.
        const response = await server.request(target, { method, key: null, redirect: "manual" });
        await response.arrayBuffer();
        expect(response.status >= 200 && response.status < 300).toBe(false);
      }),
      { numRuns: 200 },
    );
  });
});
