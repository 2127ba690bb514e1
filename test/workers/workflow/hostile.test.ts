import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FANOUT_PARALLELISM } from "../../../src/workers/workflow/executor.ts";
import { call, createAgent, newRealm, realmKey } from "../../helpers/control-plane.ts";
import { eventually } from "../../helpers/iii.ts";
import { startTestServer, type TestServer, UNUSED_PROVIDER_KEYS } from "../../helpers/server.ts";

let server: TestServer;
/** The page a step fetches: JSON nested a million arrays deep (2 MB). */
let page: Server;
let pageUrl: string;
let realm: string;
let key: string;
/** Who each call of tool::test_whoami ran as. */
const callers: unknown[] = [];
/** test::hang's calls that saw their invocation aborted. */
let aborted = 0;

beforeAll(async () => {
  page = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(`${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}`);
  });
  await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
  pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/deep.json`;
  server = await startTestServer({ env: { ...UNUSED_PROVIDER_KEYS, AGENTOS_ALLOW_PRIVATE_NETWORK: "1" } });
  const worker = server.service.engine.worker("test");
  worker.registerFunction({ id: "tool::test_whoami" }, (_payload, ctx) => {
    callers.push(ctx.auth);
    return "ran";
  });
  // A page of 3 MB: under the 4 MiB a stored value may hold, over it once kept as input and outputVar.
  worker.registerFunction({ id: "test::page" }, () => "x".repeat(3_000_000));
  worker.registerFunction({ id: "test::echo" }, (payload) => (payload as { prompt: string }).prompt);
  worker.registerFunction({ id: "test::args" }, (payload) => payload);
  worker.registerFunction({ id: "test::small_page" }, () => "x".repeat(1_000_000));
  worker.registerFunction({ id: "test::fail" }, () => {
    throw new Error("refused");
  });
  worker.registerFunction(
    { id: "test::hang" },
    (_payload, ctx) =>
      new Promise((resolve) =>
        ctx.signal.addEventListener("abort", () => {
          aborted++;
          resolve("aborted");
        }),
      ),
  );
  realm = await newRealm(server, "hostile");
  key = await realmKey(server, realm);
});
afterAll(async () => {
  await server.close();
  await new Promise((resolve) => page.close(resolve));
});

async function create(steps: unknown[]): Promise<string> {
  const created = await call(server, "POST", "/api/workflows", { name: "wf", steps }, key);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.id;
}

describe("workflow runs against a hostile tenant or step output", () => {
  it("checks a step's own agent's capabilities, as it runs as that agent", async () => {
    const agent = await createAgent(server, realm, { capabilities: ["memory::*"] });
    const id = await create([{ name: "act", functionId: "tool::test_whoami", agentId: agent, args: {} }]);
    callers.length = 0;
    const run = await call(server, "POST", "/api/workflows/run", { workflowId: id }, key);
    expect(run.status).toBe(403);
    expect(run.body.error).toContain(`Agent ${agent} may not call tool::test_whoami (step "act"`);
    // Named as the run's agent, another agent's rights do not stand in for the step's own.
    const allowed = await createAgent(server, realm, { capabilities: ["tool::*"] });
    const asOther = await call(
      server,
      "POST",
      "/api/workflows/run",
      { workflowId: id, agentId: allowed },
      key,
    );
    expect(asOther.status).toBe(403);
    expect(callers).toEqual([]);
    // A step agent that may call the tool runs it, as itself.
    const fine = await create([{ name: "act", functionId: "tool::test_whoami", agentId: allowed, args: {} }]);
    expect((await call(server, "POST", "/api/workflows/run", { workflowId: fine }, key)).status).toBe(200);
    expect(callers).toEqual([expect.objectContaining({ agentId: allowed })]);
  });

  it("fails a run, naming the step, when a step's output is too large to store, instead of leaving it running", async () => {
    const id = await create([
      { name: "fetch", functionId: "test::page", outputVar: "page" },
      { name: "after", functionId: "test::echo", promptTemplate: "done" },
    ]);
    const run = await call(server, "POST", "/api/workflows/run", { workflowId: id }, key);
    expect(run.status).toBe(422);
    expect(run.body.error).toContain('Step "fetch" failed: its output could not be stored with the run');
    const runs = await call(server, "GET", `/api/workflows/${id}/runs`, undefined, key);
    expect(runs.body.runs).toHaveLength(1);
    const [stored] = runs.body.runs;
    expect(stored).toMatchObject({ status: "failed", stoppedAt: "fetch", position: 0, results: [] });
    expect(stored.vars).toEqual({ input: null });
  });

  it("fails a run, not the service (500), when an output repeats one value past what can be serialized", async () => {
    // 600 whole-template leaves keep the 1 MB page itself each: 600 MB as JSON, past V8's string limit.
    const args = Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`k${i}`, "{{page}}"]));
    const id = await create([
      { name: "fetch", functionId: "test::small_page", outputVar: "page" },
      { name: "echo", functionId: "test::args", args },
    ]);
    const run = await call(server, "POST", "/api/workflows/run", { workflowId: id }, key);
    expect(run.status).toBe(422);
    expect(run.body.error).toContain('Step "echo" failed: its output could not be stored with the run');
    const runs = await call(server, "GET", `/api/workflows/${id}/runs`, undefined, key);
    expect(runs.body.runs[0]).toMatchObject({ status: "failed", stoppedAt: "echo", position: 1 });
  });

  it("fails a run, not the service (500), when a fetched page is JSON nested too deep to store", async () => {
    const id = await create([{ name: "fetch", functionId: "tool::api_call", args: { url: pageUrl } }]);
    const run = await call(server, "POST", "/api/workflows/run", { workflowId: id }, key);
    expect(run.status).toBe(422);
    expect(run.body.error).toContain('Step "fetch" failed: its output could not be stored with the run');
    const runs = await call(server, "GET", `/api/workflows/${id}/runs`, undefined, key);
    expect(runs.body.runs[0]).toMatchObject({ status: "failed", stoppedAt: "fetch", position: 0 });
  });

  it("fails a run, naming the step, whose template would render too much text, instead of leaving it running", async () => {
    const id = await create([
      { name: "fetch", functionId: "test::small_page", outputVar: "page" },
      { name: "quote", functionId: "test::echo", promptTemplate: "{{page}} ".repeat(11) },
    ]);
    const run = await call(server, "POST", "/api/workflows/run", { workflowId: id }, key);
    expect(run.status).toBe(422);
    expect(run.body.error).toContain('Step "quote" failed: a template would render to more than');
    const runs = await call(server, "GET", `/api/workflows/${id}/runs`, undefined, key);
    expect(runs.body.runs[0]).toMatchObject({ status: "failed", stoppedAt: "quote", position: 1 });
  });

  it("runs a long fanout batch a bounded number of steps at a time, every step once, in step order", async () => {
    let running = 0;
    let most = 0;
    server.service.engine.worker("test").registerFunction({ id: "test::counted" }, async (payload) => {
      most = Math.max(most, ++running);
      await new Promise((resolve) => setImmediate(resolve));
      running--;
      return (payload as { prompt: string }).prompt;
    });
    const steps = Array.from({ length: 40 }, (_, index) => ({
      name: `s${index}`,
      functionId: "test::counted",
      mode: "fanout",
      promptTemplate: `${index}`,
    }));
    const id = await create(steps);
    const run = await call(server, "POST", "/api/workflows/run", { workflowId: id }, key);
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(run.body.results.map((result: { output: unknown }) => result.output)).toEqual(
      steps.map((step) => step.promptTemplate),
    );
    expect(most).toBe(FANOUT_PARALLELISM);
  });

  it("stops a fanout step's siblings when one fails the run, rather than leave them running unseen", async () => {
    const id = await create([
      { name: "broken", functionId: "test::fail", mode: "fanout" },
      { name: "long", functionId: "test::hang", mode: "fanout" },
    ]);
    aborted = 0;
    const run = await call(server, "POST", "/api/workflows/run", { workflowId: id }, key);
    expect(run.status).toBe(422);
    expect(run.body.error).toContain('Step "broken" failed: refused');
    // A failed run can be neither cancelled nor seen running: its sibling ended with it.
    expect(aborted).toBe(1);
  });
});

describe("a run resumed after a restart", () => {
  it("does not run steps its workflow gained after it started, with the rights it started with", async () => {
    const seen: Array<{ prompt: string; auth: { kind: string } }> = [];
    const register = (target: TestServer) => {
      const worker = target.service.engine.worker("test");
      worker.registerFunction({ id: "test::hang" }, () => new Promise(() => undefined));
      worker.registerFunction({ id: "test::seen" }, (payload, ctx) => {
        seen.push({ prompt: (payload as { prompt: string }).prompt, auth: ctx.auth as { kind: string } });
        return "ok";
      });
    };
    const first = await startTestServer();
    register(first);
    const tenant = await newRealm(first, "resumed");
    const tenantKey = await realmKey(first, tenant);
    // An admin runs an admin's workflow of the realm; it is in flight when the service stops.
    const steps = [
      { name: "wait", functionId: "test::hang" },
      { name: "report", functionId: "test::seen", promptTemplate: "v1" },
    ];
    const created = await call(first, "POST", "/api/workflows", { name: "r", realmId: tenant, steps });
    const id = created.body.id;
    const run = await call(first, "POST", "/api/workflows/run", {
      workflowId: id,
      realmId: tenant,
      async: true,
    });
    expect(run.status).toBe(202);
    // The realm key rewrites the steps meanwhile.
    const rewritten = [{ name: "mine", functionId: "test::seen", promptTemplate: "v2" }];
    expect((await call(first, "PATCH", `/api/workflows/${id}`, { steps: rewritten }, tenantKey)).status).toBe(
      200,
    );
    await first.service.close();
    const second = await startTestServer({}, { dataDir: first.dataDir });
    try {
      register(second);
      await eventually(async () => {
        const got = await call(second, "GET", `/api/workflows/runs/${run.body.runId}`);
        expect(got.body.status, JSON.stringify(got.body)).toBe("interrupted");
        expect(got.body.error).toContain(`workflow ${id} changed since it started (version 1, now 2)`);
        return true;
      });
      expect(seen).toEqual([]);
    } finally {
      await second.close();
      await first.close();
    }
  });
});

describe("a workflow written by a realm's key", () => {
  it("cannot tell a function open to other realms alone from one that does not exist", async () => {
    const owner = await newRealm(server, "owner");
    server.service.engine
      .worker("test")
      .registerFunction({ id: "test::theirs", metadata: { realms: [owner] } }, () => "theirs");
    const write = (functionId: string, as: string) =>
      call(server, "POST", "/api/workflows", { name: "probe", steps: [{ name: "s", functionId }] }, as);
    const theirs = await write("test::theirs", key);
    const none = await write("test::none_at_all", key);
    expect(theirs.status).toBe(400);
    expect(theirs.body.error.replace("test::theirs", "X")).toBe(
      none.body.error.replace("test::none_at_all", "X"),
    );
    expect((await write("test::theirs", await realmKey(server, owner))).status).toBe(201);
  });
});
