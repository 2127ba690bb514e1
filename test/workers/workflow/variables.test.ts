import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { json, startTestServer, type TestServer } from "../../helpers/server.ts";

let server: TestServer;
beforeEach(async () => {
  server = await startTestServer();
  const worker = server.service.engine.worker("test");
  worker.registerFunction({ id: "test::echo" }, (payload) => (payload as { prompt: string }).prompt);
  worker.registerFunction({ id: "test::args" }, (payload) => payload);
});
afterEach(async () => {
  await server.close();
});

const create = (steps: unknown[]) =>
  server.request("/api/workflows", { method: "POST", json: { name: "wf", steps } });

async function runOf(steps: unknown[], input: unknown) {
  const created = await create(steps);
  expect(created.status, await created.clone().text()).toBe(201);
  const { id } = await json(created);
  const run = await server.request("/api/workflows/run", { method: "POST", json: { workflowId: id, input } });
  return json(run);
}

describe("the run's own input in every step", () => {
  it("is {{run.input}} in a later step's prompt and args, while {{input}} stays the previous output", async () => {
    const body = await runOf(
      [
        { name: "first", functionId: "test::echo", promptTemplate: "draft about {{input.topic}}" },
        {
          name: "second",
          functionId: "test::echo",
          promptTemplate: "{{run.input.topic}} | {{input}}",
        },
        {
          name: "third",
          functionId: "test::args",
          args: { topic: "{{run.input.topic}}", all: "{{run.input}}" },
        },
      ],
      { topic: "otters" },
    );
    expect(body.status).toBe("completed");
    expect(body.results.map((result: { output: unknown }) => result.output)).toEqual([
      "draft about otters",
      "otters | draft about otters",
      { topic: "otters", all: { topic: "otters" } },
    ]);
  });

  it("gives a loop step's prompt its {{iteration}}", async () => {
    const body = await runOf(
      [
        {
          name: "again",
          functionId: "test::echo",
          mode: "loop",
          maxIterations: 2,
          promptTemplate: "pass {{iteration}}",
        },
      ],
      "x",
    );
    expect(body.results[0].output).toBe("pass 2");
  });
});

describe("template variables checked at create", () => {
  it.each([
    [
      [{ name: "ask", functionId: "test::echo", promptTemplate: "About {{topic}}" }],
      'steps.0.promptTemplate: step "ask" names {{topic}}, which the run will not have',
    ],
    [
      [
        { name: "early", functionId: "test::args", args: { text: "{{summary}}" } },
        { name: "late", functionId: "test::echo", outputVar: "summary" },
      ],
      'steps.0.args: step "early" names {{summary}}, which the run will not have at that step (step 1 sets it',
    ],
    [
      [
        { name: "a", functionId: "test::echo", mode: "fanout", outputVar: "left" },
        { name: "b", functionId: "test::echo", mode: "fanout", promptTemplate: "{{left}}" },
      ],
      'steps.1.promptTemplate: step "b" names {{left}}',
    ],
    [
      [{ name: "once", functionId: "test::echo", promptTemplate: "pass {{iteration}}" }],
      'steps.0.promptTemplate: step "once" names {{iteration}}',
    ],
  ])("refuses %j with a 400 naming the step and the variable", async (steps, message) => {
    const response = await create(steps);
    expect(response.status).toBe(400);
    expect((await json(response)).error).toContain(message);
  });

  it("refuses the same on update, and leaves the workflow as it was", async () => {
    const created = await json(await create([{ name: "a", functionId: "test::echo" }]));
    const response = await server.request(`/api/workflows/${created.id}`, {
      method: "PATCH",
      json: { steps: [{ name: "a", functionId: "test::echo", promptTemplate: "{{nope}}" }] },
    });
    expect(response.status).toBe(400);
    expect((await json(response)).error).toContain('steps.0.promptTemplate: step "a" names {{nope}}');
    expect((await json(await server.request(`/api/workflows/${created.id}`))).version).toBe(1);
  });

  it("refuses an outputVar named run, which would hide the run's input", async () => {
    const response = await create([{ name: "a", functionId: "test::echo", outputVar: "run" }]);
    expect(response.status).toBe(400);
    expect((await json(response)).error).toContain("outputVar cannot be input, run, __fanout or __proto__");
  });

  it("refuses an outputVar named __proto__, whose value would never reach a template", async () => {
    // Assigning it replaced the variables' prototype: `{{__proto__.x}}` then rendered as written.
    const response = await create([
      { name: "a", functionId: "test::args", outputVar: "__proto__" },
      { name: "b", functionId: "test::echo", promptTemplate: "got {{__proto__.prompt}}" },
    ]);
    expect(response.status).toBe(400);
    expect((await json(response)).error).toContain("steps.0.outputVar: outputVar cannot be");
  });

  it("accepts earlier steps' variables, a loop's own, a collect's fanoutResults and \\{{ literals", async () => {
    const response = await create([
      { name: "a", functionId: "test::echo", outputVar: "first" },
      {
        name: "b",
        functionId: "test::echo",
        mode: "loop",
        outputVar: "draft",
        promptTemplate: "{{draft}} {{iteration}}",
      },
      { name: "c", functionId: "test::echo", mode: "fanout", promptTemplate: "{{first}}" },
      { name: "d", functionId: "test::args", mode: "collect", args: { all: "{{fanoutResults}}" } },
      {
        name: "e",
        functionId: "test::args",
        args: { text: "{{run.input}} {{__fanout}} \\{{literal}}" },
      },
    ]);
    expect(response.status, await response.clone().text()).toBe(201);
  });
});
