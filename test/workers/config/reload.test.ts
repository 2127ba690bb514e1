import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { call } from "../../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

let server: TestServer | undefined;
afterEach(async () => server?.close());

function write(home: string, path: string, text: string): void {
  mkdirSync(dirname(join(home, path)), { recursive: true });
  writeFileSync(join(home, path), text);
}

async function agentsNamed(name: string): Promise<Array<{ id: string }>> {
  const { body } = await call(server as TestServer, "GET", "/api/agents?realmId=realm-default&limit=100");
  return (body.agents ?? body).filter((agent: { name: string }) => agent.name === name);
}

describe("config reload", () => {
  it("run twice at once, both succeed and leave one agent per name", async () => {
    server = await startTestServer();
    for (const name of ["alpha", "beta", "gamma"])
      write(server.dataDir, `agents/${name}/agent.toml`, `model = "gpt-4o"\n`);
    const both = await Promise.all([
      call(server, "POST", "/api/config/reload", {}),
      call(server, "POST", "/api/config/reload", {}),
    ]);
    for (const { status, body } of both) {
      expect(status).toBe(200);
      expect(body.problems).toEqual([]);
    }
    for (const name of ["alpha", "beta", "gamma"]) expect(await agentsNamed(name)).toHaveLength(1);
  });

  it("takes over an agent of the same name made over the API instead of reporting a duplicate", async () => {
    server = await startTestServer();
    const made = await call(server, "POST", "/api/agents", { name: "helper", model: "gpt-4o" });
    expect(made.status).toBe(201);
    write(server.dataDir, "agents/helper/agent.toml", `model = "gpt-4o-mini"\n`);
    const { body } = await call(server, "POST", "/api/config/reload", {});
    expect(body.problems).toEqual([]);
    expect(body.agents.updated).toEqual(["helper"]);
    expect(await agentsNamed("helper")).toEqual([expect.objectContaining({ id: made.body.id })]);
    expect((await call(server, "GET", `/api/agents/${made.body.id}`)).body.model).toBe("gpt-4o-mini");
  });

  it("resolves a YAML workflow step's agent by name when the agent was made over the API", async () => {
    server = await startTestServer();
    const made = await call(server, "POST", "/api/agents", { name: "helper", model: "gpt-4o" });
    write(
      server.dataDir,
      "workflows/ask.yaml",
      "name: Ask\nsteps:\n  - name: ask\n    functionId: agent::chat\n    agent: helper\n    promptTemplate: '{{input}}'\n",
    );
    const { body } = await call(server, "POST", "/api/config/reload", {});
    expect(body.problems).toEqual([]);
    expect(body.workflows.loaded).toEqual(["ask"]);
    const workflow = await call(server, "GET", "/api/workflows/ask");
    expect(workflow.body.steps[0].agentId).toBe(made.body.id);
  });
});

describe("config validate", () => {
  it("checks workflows/ too: lists the good ones and names each bad file with its problem", async () => {
    server = await startTestServer();
    const home = server.dataDir;
    write(home, "workflows/good.yaml", "name: Good\nsteps:\n  - name: a\n    functionId: agent::chat\n");
    write(
      home,
      "workflows/unknown.yaml",
      "name: U\nsteps:\n  - name: a\n    functionId: x::y\n    promptTemplate: '{{topic}}'\n",
    );
    write(home, "workflows/fields.yaml", "name: F\nsteps:\n  - name: a\n    mode: teleport\n");
    write(home, "workflows/broken.yaml", "steps: [unclosed\n");
    const { status, body } = await call(server, "POST", "/api/config/validate", {});
    expect(status).toBe(200);
    expect(body.workflows).toEqual(["good"]);
    const problems = Object.fromEntries(
      (body.problems as Array<{ file: string; message: string }>).map((problem) => [
        problem.file.slice(home.length + 1),
        problem.message,
      ]),
    );
    expect(Object.keys(problems).sort()).toEqual([
      "workflows/broken.yaml",
      "workflows/fields.yaml",
      "workflows/unknown.yaml",
    ]);
    expect(problems["workflows/unknown.yaml"]).toContain('steps.0.promptTemplate: step "a" names {{topic}}');
    expect(problems["workflows/fields.yaml"]).toContain("steps.0.mode");
  });
});
