import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { serverWithFakeModel } from "../helpers/fake-openai.ts";
import { changedRecords, createRealmFixture, type RealmFixture, snapshotRealm } from "../helpers/fixtures.ts";
import { answerProblem, type FuzzRequest, type Operation, requestFor } from "../helpers/route-fuzz.ts";
import { json, startTestServer, TEST_ADMIN_KEY, type TestServer } from "../helpers/server.ts";

/**
 * Every operation of GET /api/openapi.json, fuzzed (issue #22) with realm B's key (and with none) while
 * realm A's fixtures must stay exactly as they were. FUZZ_RUNS (default 60 per operation) runs longer;
 * a failure prints fast-check's seed, and FUZZ_SEED replays it.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
/** An answer later than this is a hang. */
const TIME_BOUND_MS = 10_000;

async function send(server: TestServer, request: FuzzRequest, key: string | null) {
  const headers = { ...request.headers, ...(key ? { authorization: `Bearer ${key}` } : {}) };
  const response = await fetch(`${server.url}${request.path}`, {
    method: request.method,
    headers,
    body: request.body,
    signal: AbortSignal.timeout(TIME_BOUND_MS),
  });
  return { status: response.status, text: await response.text() };
}

/** Fuzzes one operation; throws fast-check's report (with its seed) on the first bad answer. */
async function fuzzOperation(
  server: TestServer,
  path: string,
  method: string,
  op: Operation,
  fixture: RealmFixture | undefined,
  key: string,
  runs = RUNS,
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(requestFor(path, method, op, fixture), fc.boolean(), async (request, withKey) => {
      const { status, text } = await send(server, request, withKey ? key : null);
      const problem = answerProblem(op, path, status, text);
      if (problem) throw new Error(`${request.method} ${request.path.slice(0, 200)} → ${problem}`);
    }),
    { numRuns: runs, ...(SEED === undefined ? {} : { seed: SEED }) },
  );
}

const ctx = serverWithFakeModel();

describe("every route, fuzzed", () => {
  it("answers hostile input with a documented 4xx in the error contract, in time, and leaves other realms alone", async () => {
    const server = ctx.server;
    const a = await createRealmFixture(server, "a");
    const b = await createRealmFixture(server, "b");
    const document = await json(await server.request("/api/openapi.json"));
    const baseline = await snapshotRealm(server, a);
    let operations = 0;
    for (const [path, methods] of Object.entries(
      document.paths as Record<string, Record<string, Operation>>,
    )) {
      for (const [method, op] of Object.entries(methods)) {
        operations++;
        await fuzzOperation(server, path, method, op, a, b.key);
        const changed = changedRecords(baseline, await snapshotRealm(server, a));
        expect(changed, `${method.toUpperCase()} ${path} changed realm A`).toEqual([]);
      }
    }
    expect(operations).toBeGreaterThan(40);
  }, 240_000);
});

describe("the fuzzer itself", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
    const worker = server.service.engine.worker("planted");
    // A route with a bug: one input makes it fail with an unexpected error (500).
    worker.registerFunction(
      {
        id: "planted::fragile",
        input: z.strictObject({ flag: z.boolean().optional(), note: z.string().optional() }),
      },
      ({ flag }) => {
        if (flag === true) throw new Error("planted bug");
        return { ok: true };
      },
    );
    worker.registerRoute("planted::fragile", "POST", "/api/planted");
  });
  afterAll(async () => {
    await server.close();
  });

  it("catches a route that answers 500 on one input, and names the request and the seed", async () => {
    const document = await json(await server.request("/api/openapi.json"));
    const op = document.paths["/api/planted"].post as Operation;
    // About one generated request in 40 reaches the bug, and most of those are refused first by a guard
    // (hostile text in `note`); 300 runs missed it once in CI. The first hit ends the runs.
    const caught = await fuzzOperation(server, "/api/planted", "post", op, undefined, TEST_ADMIN_KEY, 3000)
      .then(() => null)
      // fast-check reports the seed and the shrunk request; the answer's problem is the report's cause.
      .catch((error: Error) => `${error.message}\n${String(error.cause)}`);
    expect(caught).toMatch(/seed: -?\d+/);
    expect(caught).toContain('\\"flag\\":true');
    expect(caught).toMatch(/server error 500/);
  });
});
