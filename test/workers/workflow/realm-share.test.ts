import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, newRealm, realmKey } from "../../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ workflowRunsPerRealm: 1 });
  // Runs until its run is cancelled.
  server.service.engine
    .worker("test")
    .registerFunction(
      { id: "test::wait" },
      (_payload, ctx) =>
        new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve("stopped"))),
    );
});
afterAll(async () => server.close());

async function waitingWorkflow(key: string): Promise<string> {
  const created = await call(
    server,
    "POST",
    "/api/workflows",
    { name: "waits", steps: [{ name: "wait", functionId: "test::wait" }] },
    key,
  );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.id;
}

const start = (workflowId: string, key?: string, realmId?: string) =>
  call(server, "POST", "/api/workflows/run", { workflowId, async: true, realmId }, key);

describe("a realm's asynchronous workflow runs", () => {
  it("go at most AGENTOS_WORKFLOW_RUNS_PER_REALM at once (429 naming it); other realms and the operator are not held", async () => {
    const busyRealm = await newRealm(server);
    const busyKey = await realmKey(server, busyRealm);
    const otherKey = await realmKey(server, await newRealm(server));
    const busy = await waitingWorkflow(busyKey);
    const first = await start(busy, busyKey);
    expect(first.status).toBe(202);
    const refused = await start(busy, busyKey);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toContain("AGENTOS_WORKFLOW_RUNS_PER_REALM");
    const elsewhere = await start(await waitingWorkflow(otherKey), otherKey);
    expect(elsewhere.status).toBe(202);
    expect((await start(busy, undefined, busyRealm)).status).toBe(202);
    // Once the first has ended, its place is free again.
    expect((await call(server, "POST", `/api/workflows/runs/${first.body.runId}/cancel`)).status).toBe(200);
    const again = await start(busy, busyKey);
    expect(again.status, JSON.stringify(again.body)).toBe(202);
  });
});
