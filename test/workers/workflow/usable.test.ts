import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createAgent, newRealm, realmKey } from "../../helpers/control-plane.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../../helpers/fake-openai.ts";
import { eventually } from "../../helpers/iii.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

let server: TestServer;
let fake: FakeOpenAI;
let page: Server;
let pageUrl: string;
let realm: string;
let key: string;
/** test::slow waits until released or aborted; what it saw is recorded here. */
const slow: { started: number; aborted: number; release: () => void } = {
  started: 0,
  aborted: 0,
  release: () => {},
};
let flaky = { calls: 0, failUntil: 0 };

beforeAll(async () => {
  fake = await startFakeOpenAI();
  page = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<html><body><h1>Opening hours</h1><p>9 to 5</p></body></html>");
  });
  await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
  pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/hours`;
  server = await startTestServer({
    env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fake.baseUrl, AGENTOS_ALLOW_PRIVATE_NETWORK: "1" },
  });
  const worker = server.service.engine.worker("test");
  worker.registerFunction({ id: "test::slow" }, (_payload, ctx) => {
    slow.started++;
    return new Promise((resolve) => {
      slow.release = () => resolve("released");
      ctx.signal.addEventListener("abort", () => {
        slow.aborted++;
        resolve("aborted");
      });
    });
  });
  worker.registerFunction({ id: "test::flaky" }, () => {
    flaky.calls++;
    if (flaky.calls <= flaky.failUntil) throw new Error(`flaky failure ${flaky.calls}`);
    return "steady";
  });
  worker.registerFunction({ id: "test::echo" }, (payload) => payload);
  realm = await newRealm(server, "workflows");
  key = await realmKey(server, realm);
});
afterAll(async () => {
  await server.close();
  await fake.close();
  await new Promise((resolve) => page.close(resolve));
});

describe("the README's workflow, as a realm key", () => {
  it("fetches the page named by the input's url with args, then has the run's agent summarise it", async () => {
    const agentId = await createAgent(server, realm, { name: "summariser" });
    const created = await call(
      server,
      "POST",
      "/api/workflows",
      {
        name: "brief",
        steps: [
          { name: "fetch", functionId: "tool::web_fetch", args: { url: "{{input.url}}" }, outputVar: "page" },
          { name: "summarise", functionId: "agent::chat", promptTemplate: "Summarise: {{page.content}}" },
        ],
      },
      key,
    );
    expect(created.status).toBe(201);
    fake.reply({ content: "Open nine to five." });
    const run = await call(
      server,
      "POST",
      "/api/workflows/run",
      { workflowId: created.body.id, input: { url: pageUrl }, agentId },
      key,
    );
    expect(run.status).toBe(200);
    expect(run.body.status).toBe("completed");
    expect(run.body.results[0].output.content).toContain("Opening hours");
    expect(run.body.results[1].output.content).toBe("Open nine to five.");
    const sent = fake.requests.at(-1) as { messages: Array<{ role: string; content: string }> };
    expect(sent.messages.at(-1)?.content).toContain("Summarise: Opening hours");
  });

  it("lets a step name its own agent, which must be in the caller's realm", async () => {
    const agentId = await createAgent(server, realm, { name: "helper" });
    const otherRealm = await newRealm(server, "other");
    const stranger = await createAgent(server, otherRealm, { name: "stranger" });
    const steps = (id: string) => [{ name: "ask", functionId: "agent::chat", agentId: id }];
    const mine = await call(server, "POST", "/api/workflows", { name: "ask", steps: steps(agentId) }, key);
    fake.reply({ content: "hello back" });
    const ok = await call(
      server,
      "POST",
      "/api/workflows/run",
      { workflowId: mine.body.id, input: "hi" },
      key,
    );
    expect(ok.body.results[0].output.content).toBe("hello back");
    const theirs = await call(server, "POST", "/api/workflows", { name: "x", steps: steps(stranger) }, key);
    expect(theirs.status).toBe(400);
    expect(theirs.body.error).toContain(`steps.0.agentId: step "ask" names agent ${stranger}`);
  });
});

describe("args", () => {
  it("renders string leaves over the run's variables, keeping the type of a whole template", async () => {
    const created = await call(server, "POST", "/api/workflows", {
      name: "args",
      steps: [
        {
          name: "echo",
          functionId: "test::echo",
          args: {
            n: "{{input.n}}",
            text: "n is {{input.n}}",
            list: ["{{input.tags.1}}"],
            missing: "{{input.x}}",
          },
        },
      ],
    });
    const run = await call(server, "POST", "/api/workflows/run", {
      workflowId: created.body.id,
      input: { n: 20, tags: ["a", "b"] },
    });
    expect(run.body.results[0].output).toEqual({
      n: 20,
      text: "n is 20",
      list: ["b"],
      missing: "{{input.x}}",
    });
  });

  it("says which payload a function refused when a step without args gives it the wrong one", async () => {
    const created = await call(server, "POST", "/api/workflows", {
      name: "no-args",
      steps: [{ name: "fetch", functionId: "tool::web_fetch" }],
    });
    const run = await call(server, "POST", "/api/workflows/run", { workflowId: created.body.id, input: "x" });
    expect(run.status).toBe(422);
    expect(run.body.error).toMatch(
      /tool::web_fetch refused the step's payload \{.*\}: .*url.*give the step "args"/,
    );
  });
});

describe("validated at create", () => {
  it.each([
    [{ functionId: "no::such" }, "calls no::such, which does not exist"],
    [{ functionId: "tool::web_fetch", args: { link: "x" } }, "link is not a field of tool::web_fetch"],
    [{ functionId: "tool::web_fetch", args: { maxSize: 10 } }, "tool::web_fetch requires url"],
    [{ functionId: "tool::web_fetch", args: { url: 5 } }, "url must be string"],
    [
      { functionId: "tool::web_fetch", args: { url: "{{nothing}}" } },
      "names {{nothing}}, which the run will not have",
    ],
  ])("refuses %j with a 400 naming the problem", async (step, message) => {
    const created = await call(server, "POST", "/api/workflows", {
      name: "bad",
      steps: [{ name: "s", ...step }],
    });
    expect(created.status).toBe(400);
    expect(created.body.error).toContain(message);
  });

  it("accepts an optional step of a function not registered yet, and reports it as missing", async () => {
    const created = await call(server, "POST", "/api/workflows", {
      name: "later",
      steps: [{ name: "s", functionId: "remote::later", optional: true }],
    });
    expect(created.status).toBe(201);
    const read = await call(server, "GET", `/api/workflows/${created.body.id}`);
    expect(read.body.missingFunctions).toEqual(["remote::later"]);
  });
});

describe("GET /api/functions", () => {
  it("lists what a realm key may call, with input schemas; internal functions only for admins", async () => {
    const mine = await call(server, "GET", "/api/functions", undefined, key);
    const ids = mine.body.functions.map((fn: { id: string }) => fn.id);
    expect(ids).toEqual(expect.arrayContaining(["agent::chat", "tool::web_fetch"]));
    expect(ids).not.toContain("state::get");
    expect(ids).not.toContain("auth::keys::create");
    const fetchTool = mine.body.functions.find((fn: { id: string }) => fn.id === "tool::web_fetch");
    expect(fetchTool.inputSchema.properties.url).toBeDefined();
    expect(mine.body.count).toBe(ids.length);
    const admin = await call(server, "GET", "/api/functions?prefix=state::");
    expect(admin.body.functions[0]).toMatchObject({ id: expect.stringMatching(/^state::/), internal: true });
  });
});

describe("background runs", () => {
  it("answers 202 at once, streams progress over SSE, and cancels mid-step with the step seeing the abort", async () => {
    const created = await call(server, "POST", "/api/workflows", {
      name: "long",
      steps: [
        { name: "first", functionId: "test::echo", args: { at: "start" } },
        { name: "wait", functionId: "test::slow" },
        { name: "never", functionId: "test::echo" },
      ],
    });
    const startedBefore = slow.started;
    const started = await call(server, "POST", "/api/workflows/run", {
      workflowId: created.body.id,
      async: true,
    });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ runId: expect.stringMatching(/^run-/), status: "running" });
    const { runId } = started.body;
    const events = await server.request(`/api/workflows/runs/${runId}/events`);
    expect(events.headers.get("content-type")).toContain("text/event-stream");
    await eventually(() => slow.started > startedBefore);
    const progress = await call(server, "GET", `/api/workflows/runs/${runId}`);
    expect(progress.body).toMatchObject({ status: "running", position: 1 });
    const cancelled = await call(server, "POST", `/api/workflows/runs/${runId}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: "cancelled", stoppedAt: "wait", completedSteps: 1 });
    expect(slow.aborted).toBe(1);
    const text = await events.text();
    expect(text).toContain("event: status");
    expect(text).toMatch(/event: step\ndata: \{[^\n]*"stepName":"first"/);
    expect(text).toContain("event: cancelled");
    const again = await call(server, "POST", `/api/workflows/runs/${runId}/cancel`);
    expect(again.status).toBe(409);
    expect(again.body.error).toContain("only a running run can be cancelled");
  });

  it("retries a failed run from the step that failed, keeping the steps before it", async () => {
    flaky = { calls: 0, failUntil: 1 };
    const created = await call(server, "POST", "/api/workflows", {
      name: "flaky",
      steps: [
        { name: "first", functionId: "test::echo", args: { n: 1 } },
        { name: "shaky", functionId: "test::flaky" },
      ],
    });
    const failed = await call(server, "POST", "/api/workflows/run", { workflowId: created.body.id });
    expect(failed.status).toBe(422);
    const { body: runs } = await call(server, "GET", `/api/workflows/${created.body.id}/runs`);
    const runId = runs.runs[0].runId;
    const retried = await call(server, "POST", `/api/workflows/runs/${runId}/retry`);
    expect(retried.status).toBe(202);
    const done = await eventually(async () => {
      const { body } = await call(server, "GET", `/api/workflows/runs/${runId}`);
      return body.status === "completed" ? body : undefined;
    });
    expect(done.results.map((r: { stepName: string }) => r.stepName)).toEqual(["first", "shaky"]);
    expect(done.retries).toBe(1);
    expect(flaky.calls).toBe(2);
  });

  it("keeps a deleted workflow's runs readable, and refuses to retry them", async () => {
    flaky = { calls: 0, failUntil: 5 };
    const created = await call(server, "POST", "/api/workflows", {
      name: "doomed",
      steps: [{ name: "shaky", functionId: "test::flaky" }],
    });
    await call(server, "POST", "/api/workflows/run", { workflowId: created.body.id });
    expect((await call(server, "DELETE", `/api/workflows/${created.body.id}`)).status).toBe(200);
    const { body } = await call(server, "GET", `/api/workflows/${created.body.id}/runs`);
    expect(body.runs).toHaveLength(1);
    const run = await call(server, "GET", `/api/workflows/runs/${body.runs[0].runId}`);
    expect(run.body.status).toBe("failed");
    const retry = await call(server, "POST", `/api/workflows/runs/${body.runs[0].runId}/retry`);
    expect(retry.status).toBe(409);
    expect(retry.body.error).toContain("was deleted");
  });
});
