import type { IIIClient } from "iii-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { call, createAgent, newRealm } from "../../helpers/control-plane.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../../helpers/fake-openai.ts";
import { connectWorker, eventually } from "../../helpers/iii.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

/**
 * A workflow whose step asks an agent, whose tool runs the workflow again (an integration's function
 * the agent may call, say, that starts a workflow): the depth limit holds through the agent's turn, as
 * it does for a step that runs a workflow itself.
 */
let fake: FakeOpenAI | undefined;
let server: TestServer | undefined;
let remote: IIIClient | undefined;
afterEach(async () => {
  await remote?.shutdown();
  remote = undefined;
  await server?.close();
  await fake?.close();
  server = undefined;
  fake = undefined;
});

describe("a workflow looping through an agent's turn", () => {
  it("nests no deeper than AGENTOS_WORKFLOW_MAX_DEPTH, the agent told why", async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fake.baseUrl },
      workflowMaxDepth: 3,
    });
    const { engine } = server.service;
    // Passes no metadata on: only the call's async context tells it runs under a workflow's step.
    engine
      .worker("integration")
      .registerFunction({ id: "acme::kick_off" }, (input) =>
        engine.trigger({ function_id: "workflow::run", payload: input }),
      );
    const realmId = await newRealm(server, "agent-loop");
    const agentId = await createAgent(server, realmId, { tools: ["acme::kick_off"] });
    const step = { name: "ask", functionId: "agent::chat", args: { agentId, message: "go on" } };
    const created = await call(server, "POST", "/api/workflows", {
      id: "through-agent",
      name: "through-agent",
      realmId,
      steps: [step],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    // Each turn the model runs the workflow again, more times than the depth allows (then it says "ok").
    const again = { toolCalls: [{ name: "acme__kick_off", arguments: { workflowId: "through-agent" } }] };
    fake.reply(...Array(8).fill(again));

    const run = await call(server, "POST", "/api/workflows/run", { workflowId: "through-agent", realmId });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(run.body.status).toBe("completed");
    const runs = await call(server, "GET", `/api/workflows/through-agent/runs?realmId=${realmId}&limit=100`);
    expect(runs.status, JSON.stringify(runs.body)).toBe(200);
    expect(runs.body.runs.map((one: { status: string }) => one.status)).toEqual(Array(3).fill("completed"));
    const told = JSON.stringify(fake.requests);
    expect(told).toContain("workflows nest at most 3 deep (AGENTOS_WORKFLOW_MAX_DEPTH)");
    expect(told).toContain("through-agent → through-agent → through-agent → through-agent");
  });
});

describe("a workflow looping through an agent's tool on a remote worker", () => {
  it("nests no deeper than AGENTOS_WORKFLOW_MAX_DEPTH: the tool call carries the chain", async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fake.baseUrl },
      workflowMaxDepth: 3,
    });
    const { engine } = server.service;
    // An iii worker in another process has no async context of ours: what it knows of the chain is
    // the metadata it is called with, which it passes on (as iii-sdk hands it to the handler).
    const worker = connectWorker(server.service.engineUrl as string, "acme");
    remote = worker;
    const seen: unknown[] = [];
    worker.registerFunction("acme::kick_off", async (input: unknown, metadata: unknown) => {
      seen.push(metadata);
      return worker.trigger({
        function_id: "workflow::run",
        payload: input,
        ...(metadata ? { metadata: metadata as Record<string, unknown> } : {}),
      });
    });
    await eventually(() => engine.functions.get("acme::kick_off"));
    const realmId = await newRealm(server, "remote-loop");
    const agentId = await createAgent(server, realmId, { tools: ["acme::kick_off"] });
    const step = { name: "ask", functionId: "agent::chat", args: { agentId, message: "go on" } };
    const created = await call(server, "POST", "/api/workflows", {
      id: "through-remote",
      name: "through-remote",
      realmId,
      steps: [step],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const again = {
      toolCalls: [{ name: "acme__kick_off", arguments: { workflowId: "through-remote", realmId } }],
    };
    fake.reply(...Array(8).fill(again));

    const run = await call(server, "POST", "/api/workflows/run", { workflowId: "through-remote", realmId });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(run.body.status).toBe("completed");
    const runs = await call(server, "GET", `/api/workflows/through-remote/runs?realmId=${realmId}&limit=100`);
    expect(runs.status, JSON.stringify(runs.body)).toBe(200);
    expect(runs.body.runs.map((one: { status: string }) => one.status)).toEqual(Array(3).fill("completed"));
    expect(JSON.stringify(fake.requests)).toContain(
      "workflows nest at most 3 deep (AGENTOS_WORKFLOW_MAX_DEPTH)",
    );
    // The worker was told the chain and nothing else of the call.
    expect(seen[0]).toEqual({ workflowChain: ["through-remote"] });
    expect(seen.every((metadata) => Object.keys(metadata as object).join() === "workflowChain")).toBe(true);
  });
});
