import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/env.ts";
import { call } from "../../helpers/control-plane.ts";
import { eventually } from "../../helpers/iii.ts";
import { json, startTestServer, type TestServer } from "../../helpers/server.ts";

/** Admin workflows whose steps run workflows: themselves, or each other. */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  server.service.engine.worker("test").registerFunction({ id: "test::leaf" }, () => "leaf");
});
afterAll(async () => {
  await server.close();
});

/** An admin workflow `id` whose one step runs `next`. */
async function runsNext(id: string, next: string, async = false) {
  const step = {
    name: "next",
    functionId: "workflow::run",
    args: { workflowId: next, ...(async ? { async } : {}) },
  };
  const created = await call(server, "POST", "/api/workflows", { id, name: id, steps: [step] });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
}

async function runsOf(id: string): Promise<Array<{ status: string; error?: string }>> {
  const { status, body } = await call(server, "GET", `/api/workflows/${id}/runs?limit=100`);
  expect(status).toBe(200);
  return body.runs;
}

const chainOf = (...ids: string[]) => ids.join(" → ");

describe("workflows nested in workflows", () => {
  it("refuses A → A at the ninth level with a 422 naming the chain, each level failing", async () => {
    await runsNext("self", "self");
    const run = await call(server, "POST", "/api/workflows/run", { workflowId: "self" });
    expect(run.status).toBe(422);
    expect(run.body.error).toContain("workflows nest at most 8 deep");
    expect(run.body.error).toContain(`level 9: ${chainOf(...Array(9).fill("self"))}`);
    const runs = await runsOf("self");
    expect(runs.map((one) => one.status)).toEqual(Array(8).fill("failed"));
  });

  it("refuses A → B → A the same way, naming both", async () => {
    await runsNext("ping", "pong");
    await runsNext("pong", "ping");
    const run = await call(server, "POST", "/api/workflows/run", { workflowId: "ping" });
    expect(run.status).toBe(422);
    const chain = chainOf("ping", "pong", "ping", "pong", "ping", "pong", "ping", "pong", "ping");
    expect(run.body.error).toContain(`level 9: ${chain}`);
    expect((await runsOf("ping")).length + (await runsOf("pong")).length).toBe(8);
  });

  it("stops A → A run asynchronously, where each run starts the next and ends", async () => {
    await runsNext("spawner", "spawner", true);
    const run = await call(server, "POST", "/api/workflows/run", { workflowId: "spawner" });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    // The eighth run's step is refused: it fails, and no ninth run ever starts.
    const runs = await eventually(async () => {
      const all = await runsOf("spawner");
      return all.some((one) => one.status === "failed") ? all : undefined;
    }, 15_000);
    expect(runs).toHaveLength(8);
    expect(runs.filter((one) => one.status === "failed")).toHaveLength(1);
    expect(runs.find((one) => one.status === "failed")?.error).toContain(
      `level 9: ${chainOf(...Array(9).fill("spawner"))}`,
    );
  });

  it("runs workflows nested exactly 8 deep", async () => {
    const leaf = { name: "leaf", functionId: "test::leaf" };
    const created = await call(server, "POST", "/api/workflows", {
      id: "depth-8",
      name: "depth-8",
      steps: [leaf],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    for (let level = 7; level >= 1; level--) await runsNext(`depth-${level}`, `depth-${level + 1}`);
    const run = await call(server, "POST", "/api/workflows/run", { workflowId: "depth-1" });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(run.body.status).toBe("completed");
  });
});

describe("AGENTOS_WORKFLOW_MAX_DEPTH", () => {
  it("sets how deep workflows nest", async () => {
    expect(loadConfig({ AGENTOS_WORKFLOW_MAX_DEPTH: "3" }).workflowMaxDepth).toBe(3);
    expect(loadConfig({}).workflowMaxDepth).toBe(8);
    expect(() => loadConfig({ AGENTOS_WORKFLOW_MAX_DEPTH: "0" })).toThrow(/AGENTOS_WORKFLOW_MAX_DEPTH/);
    const shallow = await startTestServer({ workflowMaxDepth: 2 });
    try {
      const step = { name: "again", functionId: "workflow::run", args: { workflowId: "self" } };
      await shallow.request("/api/workflows", {
        method: "POST",
        json: { id: "self", name: "self", steps: [step] },
      });
      const run = await shallow.request("/api/workflows/run", {
        method: "POST",
        json: { workflowId: "self" },
      });
      expect(run.status).toBe(422);
      expect((await json(run)).error).toContain(
        "nest at most 2 deep (AGENTOS_WORKFLOW_MAX_DEPTH), and this run would be level 3: self → self → self",
      );
    } finally {
      await shallow.close();
    }
  });
});
