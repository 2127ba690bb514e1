import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { json, startTestServer, type TestServer } from "../../helpers/server.ts";

let server: TestServer;
const calls: Array<{ fn: string; payload: Record<string, unknown> }> = [];

beforeEach(async () => {
  server = await startTestServer();
  calls.length = 0;
  const worker = server.service.engine.worker("test");
  const record = (fn: string) => (payload: unknown) => {
    calls.push({ fn, payload: payload as Record<string, unknown> });
  };
  worker.registerFunction({ id: "test::echo" }, (payload) => {
    record("echo")(payload);
    return (payload as { prompt: string }).prompt;
  });
  worker.registerFunction({ id: "test::upper" }, (payload) =>
    String((payload as { input: unknown }).input).toUpperCase(),
  );
  worker.registerFunction({ id: "test::count" }, (payload) => {
    record("count")(payload);
    return `pass ${(payload as { iteration: number }).iteration}${(payload as { iteration: number }).iteration === 3 ? " DONE" : ""}`;
  });
  worker.registerFunction({ id: "test::merge" }, (payload) =>
    (payload as { fanoutResults: unknown[] }).fanoutResults.join("+"),
  );
  worker.registerFunction({ id: "test::boom" }, () => {
    throw new Error("boom");
  });
  let flaky = 0;
  worker.registerFunction({ id: "test::flaky" }, () => {
    flaky++;
    if (flaky < 3) throw new Error(`flake ${flaky}`);
    return `ok after ${flaky}`;
  });
  worker.registerFunction(
    { id: "test::slow" },
    () => new Promise((resolve) => setTimeout(() => resolve("late"), 500)),
  );
  worker.registerFunction(
    { id: "test::strict", input: z.strictObject({ message: z.string() }) },
    ({ message }) => `strict got ${message}`,
  );
});
afterEach(async () => {
  await server.close();
});

async function create(steps: unknown[], id?: string): Promise<string> {
  const response = await server.request("/api/workflows", {
    method: "POST",
    json: { id, name: "wf", steps },
  });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await json(response)).id;
}

async function run(workflowId: string, input: unknown, extra: Record<string, unknown> = {}) {
  return server.request("/api/workflows/run", { method: "POST", json: { workflowId, input, ...extra } });
}

describe("workflow definitions", () => {
  it.each([
    [[{ name: "a", functionId: "x::y", mode: "teleport" }], "steps.0.mode"],
    [[{ name: "a" }], "steps.0.functionId"],
    [[{ name: "a", functionId: "x::y", mode: "loop", maxIterations: 0 }], "steps.0.maxIterations"],
    [[{ name: "a", functionId: "x::y", timeoutMs: -5 }], "steps.0.timeoutMs"],
    [
      [
        { name: "a", functionId: "x::y" },
        { name: "a", functionId: "x::z" },
      ],
      "steps.1.name",
    ],
    [[], "steps"],
  ])("refuses %j with 400 naming %s", async (steps, field) => {
    const response = await server.request("/api/workflows", { method: "POST", json: { name: "bad", steps } });
    expect(response.status).toBe(400);
    expect((await json(response)).error).toContain(field);
  });

  it.each([".", ".."])("refuses the id %j, a path segment every URL resolver would drop", async (id) => {
    const steps = [{ name: "a", functionId: "test::echo" }];
    const response = await server.request("/api/workflows", {
      method: "POST",
      json: { id, name: "dots", steps },
    });
    expect(response.status).toBe(400);
    expect((await json(response)).error).toContain("id must not be only dots");
  });

  it("stores and lists definitions", async () => {
    const id = await create([{ name: "a", functionId: "test::echo" }], "my-flow");
    expect(id).toBe("my-flow");
    // A bare array, as the specification shows it.
    const workflows = await json(await server.request("/api/workflows"));
    expect(workflows.map((w: { id: string }) => w.id)).toContain("my-flow");
  });
});

describe("execution", () => {
  it("runs sequential steps, feeding each output to the next, with templates and variables", async () => {
    const id = await create([
      {
        name: "greet",
        functionId: "test::echo",
        // `\{{` is a literal `{{`: an unknown variable written plainly is refused at create.
        promptTemplate: "Hello {{input}} and \\{{unknown}}",
        outputVar: "greeting",
      },
      { name: "shout", functionId: "test::upper", outputVar: "loud" },
      { name: "both", functionId: "test::echo", promptTemplate: "{{greeting}} / {{loud}} / \\{{obj}}" },
    ]);
    const body = await json(await run(id, "Ada"));
    expect(body.status).toBe("completed");
    expect(body.runId).toMatch(/^run-/);
    expect(body.results.map((r: { stepName: string; output: unknown }) => [r.stepName, r.output])).toEqual([
      ["greet", "Hello Ada and {{unknown}}"],
      ["shout", "HELLO ADA AND {{UNKNOWN}}"],
      ["both", "Hello Ada and {{unknown}} / HELLO ADA AND {{UNKNOWN}} / {{obj}}"],
    ]);
    expect(body.vars).toMatchObject({
      greeting: "Hello Ada and {{unknown}}",
      loud: "HELLO ADA AND {{UNKNOWN}}",
    });
    expect(typeof body.results[0].durationMs).toBe("number");
  });

  it("inserts objects as JSON and gives functions the DESIGN payload", async () => {
    const id = await create([{ name: "a", functionId: "test::echo", promptTemplate: "data={{input}}" }]);
    await run(id, { k: 1 });
    expect(calls[0]?.payload).toMatchObject({
      input: { k: 1 },
      prompt: 'data={"k":1}',
      message: 'data={"k":1}',
    });
  });

  it("runs consecutive fanout steps in parallel and collects their results", async () => {
    const id = await create([
      { name: "f1", functionId: "test::echo", mode: "fanout", promptTemplate: "one", outputVar: "a" },
      { name: "f2", functionId: "test::echo", mode: "fanout", promptTemplate: "two", outputVar: "b" },
      { name: "merge", functionId: "test::merge", mode: "collect" },
      { name: "show", functionId: "test::echo", promptTemplate: "{{__fanout}}" },
    ]);
    const body = await json(await run(id, "x"));
    expect(body.vars).toMatchObject({ a: "one", b: "two", __fanout: ["one", "two"] });
    expect(body.results.map((r: { output: unknown }) => r.output)).toEqual([
      "one",
      "two",
      "one+two",
      '["one","two"]',
    ]);
  });

  it("skips a conditional step unless the previous output contains the condition (any case)", async () => {
    const id = await create([
      { name: "a", functionId: "test::echo", promptTemplate: "Status: APPROVED" },
      {
        name: "yes",
        functionId: "test::echo",
        mode: "conditional",
        condition: "approved",
        promptTemplate: "ran",
      },
      {
        name: "no",
        functionId: "test::echo",
        mode: "conditional",
        condition: "rejected",
        promptTemplate: "ran too",
      },
    ]);
    const body = await json(await run(id, null));
    expect(body.results[1]).toMatchObject({ stepName: "yes", output: "ran" });
    expect(body.results[2]).toEqual({ stepName: "no", output: null, skipped: true, durationMs: 0 });
  });

  it("loops with the iteration number until the output contains `until`", async () => {
    const id = await create([
      { name: "l", functionId: "test::count", mode: "loop", until: "done", outputVar: "last" },
    ]);
    const body = await json(await run(id, null));
    expect(calls.map((c) => c.payload.iteration)).toEqual([1, 2, 3]);
    expect(body.vars.last).toBe("pass 3 DONE");
    const bounded = await create([{ name: "l", functionId: "test::count", mode: "loop", maxIterations: 2 }]);
    calls.length = 0;
    await run(bounded, null);
    expect(calls).toHaveLength(2);
  });

  it("fails the run on a failing step (errorMode fail), recording it", async () => {
    const id = await create([
      { name: "ok", functionId: "test::echo" },
      { name: "bad", functionId: "test::boom" },
      { name: "never", functionId: "test::echo" },
    ]);
    const response = await run(id, "x");
    expect(response.status).toBe(422);
    const message = (await json(response)).error as string;
    expect(message).toContain('Step "bad" failed: boom');
    const runId = /run (run-[0-9a-f-]+)/.exec(message)?.[1];
    const record = await json(await server.request(`/api/workflows/runs/${runId}`));
    expect(record).toMatchObject({ status: "failed", stoppedAt: "bad", error: 'Step "bad" failed: boom' });
    expect(record.results.map((r: { stepName: string }) => r.stepName)).toEqual(["ok"]);
    expect(typeof record.failedAt).toBe("string");
  });

  it("skips a failing step with errorMode skip, and retries with errorMode retry", async () => {
    const id = await create([
      { name: "bad", functionId: "test::boom", errorMode: "skip", outputVar: "b" },
      { name: "flaky", functionId: "test::flaky", errorMode: "retry", maxRetries: 3 },
    ]);
    const body = await json(await run(id, "x"));
    expect(body.results[0]).toMatchObject({ stepName: "bad", output: null, error: "boom" });
    expect(body.results[1]).toMatchObject({ stepName: "flaky", output: "ok after 3" });
    expect(body.vars.b).toBeNull();
  });

  it("enforces a step's timeoutMs", async () => {
    const id = await create([{ name: "slow", functionId: "test::slow", timeoutMs: 50 }]);
    const response = await run(id, null);
    expect(response.status).toBe(422);
    expect((await json(response)).error).toContain("timed out");
  });

  it("gives a strict function only the fields it declares", async () => {
    const id = await create([{ name: "s", functionId: "test::strict", promptTemplate: "hi {{input}}" }]);
    const body = await json(await run(id, "there"));
    expect(body.results[0].output).toBe("strict got hi there");
  });
});

describe("runs", () => {
  it("lists runs newest first with total, limit and offset", async () => {
    const id = await create([{ name: "a", functionId: "test::echo" }]);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await json(await run(id, `n${i}`))).runId);
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    const page = await json(await server.request(`/api/workflows/${id}/runs?limit=2&offset=1`));
    expect(page).toMatchObject({ total: 5, limit: 2, offset: 1 });
    expect(page.runs.map((r: { runId: string }) => r.runId)).toEqual([ids[3], ids[2]]);
    expect((await server.request(`/api/workflows/${id}/runs?limit=101`)).status).toBe(400);
    expect((await server.request(`/api/workflows/${id}/runs?offset=-1`)).status).toBe(400);
  });

  it("starts a run right after an update or a delete from the workflow as it is now", async () => {
    const id = await create([{ name: "a", functionId: "test::echo" }]);
    expect(await json(await run(id, "x"))).toMatchObject({ results: [{ stepName: "a", output: "x" }] });
    const updated = await server.request(`/api/workflows/${id}`, {
      method: "PATCH",
      json: { steps: [{ name: "b", functionId: "test::upper" }] },
    });
    expect(updated.status).toBe(200);
    const second = await json(await run(id, "x"));
    expect(second).toMatchObject({ results: [{ stepName: "b", output: "X" }] });
    const stored = await json(await server.request(`/api/workflows/runs/${second.runId}`));
    expect(stored.workflowVersion).toBe(2);
    expect((await server.request(`/api/workflows/${id}`, { method: "DELETE" })).status).toBe(200);
    expect((await run(id, "x")).status).toBe(404);
  });

  it("publishes started, step_completed and completed on workflow.run", async () => {
    const events: string[] = [];
    server.service.engine.worker("test").registerFunction({ id: "test::events" }, (data) => {
      events.push((data as { event: string }).event);
    });
    server.service.engine.registerTrigger("test", {
      type: "subscribe",
      function_id: "test::events",
      config: { topic: "workflow.run" },
    });
    const id = await create([{ name: "a", functionId: "test::echo" }]);
    await run(id, "x");
    await expect.poll(() => events).toEqual(["started", "step_completed", "completed"]);
  });
});

describe("agent capabilities", () => {
  it("refuses before anything runs when a step's function is outside the agent's capabilities", async () => {
    const agent = (
      await json(
        await server.request("/api/agents", {
          method: "POST",
          json: { name: "a", model: "gpt-4o", capabilities: ["test::echo"] },
        }),
      )
    ).id;
    const id = await create([
      { name: "fine", functionId: "test::echo" },
      { name: "forbidden", functionId: "test::boom" },
    ]);
    const response = await run(id, "x", { agentId: agent });
    expect(response.status).toBe(403);
    expect((await json(response)).error).toContain('test::boom (step "forbidden"');
    expect(calls).toHaveLength(0);
    const allowed = await create([{ name: "fine", functionId: "test::echo" }]);
    const ok = await json(await run(allowed, "x", { agentId: agent }));
    expect(ok.status).toBe("completed");
    expect(calls[0]?.payload.agentId).toBe(agent);
  });
});
