import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createAgent, newRealm } from "../helpers/control-plane.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../helpers/fake-openai.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let fake: FakeOpenAI;
let server: TestServer;
const lines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  fake = await startFakeOpenAI();
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  server = await startTestServer(
    { env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fake.baseUrl } },
    { logger: pino({ level: "info" }, sink) },
  );
});
afterAll(async () => {
  await server.close();
  await fake.close();
});

async function scrape(): Promise<string> {
  const response = await server.request("/metrics");
  expect(response.status).toBe(200);
  return response.text();
}

/** The value of one sample, matched by its name and labels in any order; 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const wanted = Object.entries(labels).every(([label, value]) => line.includes(`${label}="${value}"`));
    if (wanted) return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return 0;
}

describe("metrics and logs of the service's work", () => {
  it("count tokens, cost, model calls and tool calls of a turn, and log the tool call without its values", async () => {
    const realmId = await newRealm(server);
    const id = await createAgent(server, realmId, { tools: ["tool::hash_compute"] });
    fake.reply(
      { toolCalls: [{ name: "tool__hash_compute", arguments: { text: "secret-value" } }] },
      { content: "done" },
    );
    const reply = await call(server, "POST", `/api/agents/${id}/message`, { message: "hash it" });
    expect(reply.status).toBe(200);
    await expect
      .poll(async () =>
        sample(await scrape(), "agentos_tool_calls_total", { tool: "tool::hash_compute", outcome: "ok" }),
      )
      .toBe(1);
    const text = await scrape();
    const labels = { provider: "openai", model: "gpt-4o", realm: realmId };
    expect(sample(text, "agentos_llm_tokens_total", { ...labels, direction: "input" })).toBe(24);
    expect(sample(text, "agentos_llm_tokens_total", { ...labels, direction: "output" })).toBe(10);
    expect(sample(text, "agentos_llm_cost_usd_total", labels)).toBeCloseTo(
      (2 * (12 * 2.5 + 5 * 10)) / 1e6,
      12,
    );
    expect(
      sample(text, "agentos_llm_call_duration_seconds_count", {
        provider: "openai",
        model: "gpt-4o",
        outcome: "ok",
      }),
    ).toBeGreaterThanOrEqual(2);
    const toolLine = lines.find((line) => line.msg === "tool call" && line.agentId === id);
    expect(toolLine).toMatchObject({ tool: "tool::hash_compute", outcome: "ok", arguments: ["text"] });
    expect(JSON.stringify(lines)).not.toContain("secret-value");
  });

  it("counts workflow runs and steps, and pulse runs, each with a log line", async () => {
    const created = await call(server, "POST", "/api/workflows", {
      name: "obs",
      steps: [{ name: "hash", functionId: "tool::hash_compute", promptTemplate: "x" }],
    });
    expect(created.status).toBe(201);
    await call(server, "POST", "/api/workflows/run", { workflowId: created.body.id, input: "x" });
    const realmId = await newRealm(server);
    const agentId = await createAgent(server, realmId);
    expect((await call(server, "POST", "/api/pulse/invoke", { realmId, agentId })).status).toBe(200);
    await expect
      .poll(async () => sample(await scrape(), "agentos_pulse_runs_total", { outcome: "completed" }))
      .toBe(1);
    const text = await scrape();
    expect(sample(text, "agentos_workflow_runs_total", { event: "started" })).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, "agentos_workflow_runs_total", { event: "completed" }) +
        sample(text, "agentos_workflow_runs_total", { event: "failed" }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, "agentos_workflow_steps_total", { status: "completed" }) +
        sample(text, "agentos_workflow_steps_total", { status: "failed" }),
    ).toBeGreaterThanOrEqual(1);
    expect(lines.some((line) => line.msg === "workflow run" && line.workflowId === created.body.id)).toBe(
      true,
    );
    expect(lines.some((line) => line.msg === "pulse run" && line.agentId === agentId)).toBe(true);
  });

  it("logs one line per request, with method, route, status and duration", async () => {
    const before = lines.length;
    await server.request("/api/health");
    await expect.poll(() => lines.slice(before).filter((line) => line.msg === "request").length).toBe(1);
    const all = lines.slice(before);
    expect(all.filter((line) => line.route === "/api/health")).toHaveLength(1);
    expect(all.find((line) => line.msg === "request")).toMatchObject({
      method: "GET",
      route: "/api/health",
      status: 200,
    });
  });
});
