import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DUE_SCOPE, dueKey, type Job, jobsScope } from "../../../src/workers/tools/schedule/store.ts";
import { call } from "../../helpers/control-plane.ts";
import { startFakeOpenAI } from "../../helpers/fake-openai.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

let server: TestServer | undefined;
afterEach(async () => server?.close());

function write(home: string, path: string, text: string): void {
  mkdirSync(dirname(join(home, path)), { recursive: true });
  writeFileSync(join(home, path), text);
}

const RESEARCHER = `name = "researcher"
description = "Finds things out"
model = "gpt-4o"
system_prompt = """
You research carefully.
"""
tool_profile = "research"
temperature = 0.2
`;

describe("declarative configuration", () => {
  it("creates the declared agents and channel bindings, keeps them on a second reload, and updates a changed file in place", async () => {
    server = await startTestServer();
    const home = server.dataDir;
    write(home, "agents/researcher/agent.toml", RESEARCHER);
    write(
      home,
      "agents/writer/agent.toml",
      `[agent]\ndescription = "Writes"\nmodel = "gpt-4o-mini"\ntool_profile = "chat"\nmax_tokens = 1000\n`,
    );
    write(
      home,
      "config/channels/support.toml",
      `platform = "slack"\nchannel_id = "C-SUPPORT"\nagent = "researcher"\n[secrets]\nsigning_secret = "channel:slack:signing_secret"\n`,
    );
    const first = await call(server, "POST", "/api/config/reload", {});
    expect(first.body).toEqual({
      agents: { created: ["researcher", "writer"], updated: [], unchanged: [] },
      channels: { bound: ["slack:C-SUPPORT"] },
      hands: { scheduled: [], unchanged: [] },
      integrations: { connected: [], unchanged: [], pending: [], removed: [] },
      workflows: { loaded: [], unchanged: [] },
      problems: [],
    });
    const { body: agents } = await call(server, "GET", "/api/agents?realmId=realm-default");
    const researcher = (agents.agents ?? agents).find(
      (agent: { name: string }) => agent.name === "researcher",
    );
    expect(researcher).toMatchObject({
      model: "gpt-4o",
      toolProfile: "research",
      temperature: 0.2,
      systemPrompt: "You research carefully.\n",
    });
    const bindings = await call(server, "GET", "/api/channels");
    expect(bindings.body).toEqual([
      expect.objectContaining({ platform: "slack", channelId: "C-SUPPORT", agentId: researcher.id }),
    ]);
    expect((await call(server, "POST", "/api/config/reload", {})).body.agents).toEqual({
      created: [],
      updated: [],
      unchanged: ["researcher", "writer"],
    });
    write(home, "agents/researcher/agent.toml", RESEARCHER.replace("temperature = 0.2", "temperature = 0.7"));
    expect((await call(server, "POST", "/api/config/reload", {})).body.agents).toEqual({
      created: [],
      updated: ["researcher"],
      unchanged: ["writer"],
    });
    expect((await call(server, "GET", `/api/agents/${researcher.id}`)).body).toMatchObject({
      id: researcher.id,
      temperature: 0.7,
    });
  });

  it("names the file, and the line or field, of every bad file, and applies the others", async () => {
    server = await startTestServer();
    const home = server.dataDir;
    write(home, "agents/good/agent.toml", `model = "gpt-4o"\n`);
    write(home, "agents/broken/agent.toml", `name = "broken"\nmodel = \n`);
    write(home, "agents/typo/agent.toml", `modle = "gpt-4o"\n`);
    write(home, "agents/hot/agent.toml", `temperature = 5\n`);
    write(
      home,
      "config/channels/leaky.toml",
      `platform = "telegram"\nchannel_id = "1"\nagent = "good"\nbot_token = "123:secret"\n`,
    );
    write(home, "config/channels/orphan.toml", `platform = "telegram"\nchannel_id = "2"\nagent = "nobody"\n`);
    const { body } = await call(server, "POST", "/api/config/reload", {});
    expect(body.agents.created).toEqual(["good"]);
    const problems = Object.fromEntries(
      (body.problems as Array<{ file: string; message: string }>).map((problem) => [
        problem.file.slice(home.length + 1),
        problem.message,
      ]),
    );
    expect(problems["agents/broken/agent.toml"]).toMatch(/^not valid TOML \(line 2, column \d+\): /);
    expect(problems["agents/typo/agent.toml"]).toMatch(/modle/);
    expect(problems["agents/hot/agent.toml"]).toMatch(/^temperature:/);
    expect(problems["config/channels/leaky.toml"]).toMatch(/^bot_token: secrets are never written in a file/);
    expect(problems["config/channels/orphan.toml"]).toMatch(/no agent nobody is declared/);
    const validated = await call(server, "POST", "/api/config/validate", {});
    expect(validated.body.agents).toEqual(["good"]);
    expect(validated.body.problems).toHaveLength(4);
  });

  it("never takes a channel another realm has bound: a declaration of it is a problem, the binding stays", async () => {
    server = await startTestServer();
    const home = server.dataDir;
    const realm = await call(server, "POST", "/api/realms", { name: "tenant", owner: "t" });
    const tenantAgent = await call(server, "POST", "/api/agents", {
      name: "tenant-bot",
      model: "gpt-4o",
      realmId: realm.body.id,
    });
    const bound = await call(server, "POST", "/api/channels", {
      platform: "slack",
      channelId: "C-TENANT",
      agentId: tenantAgent.body.id,
    });
    expect(bound.status).toBe(201);
    write(home, "agents/grabber/agent.toml", `model = "gpt-4o"\n`);
    write(
      home,
      "config/channels/grab.toml",
      `platform = "slack"\nchannel_id = "C-TENANT"\nagent = "grabber"\n`,
    );
    const { body } = await call(server, "POST", "/api/config/reload", {});
    expect(body.channels.bound).toEqual([]);
    expect(body.problems).toEqual([
      {
        file: join(home, "config/channels/grab.toml"),
        message: expect.stringContaining("bound by another realm"),
      },
    ]);
    const bindings = await call(server, "GET", "/api/channels");
    expect(bindings.body).toContainEqual(
      expect.objectContaining({ channelId: "C-TENANT", agentId: tenantAgent.body.id }),
    );
  });

  it("loads the files at start", async () => {
    const first = await startTestServer();
    const home = first.dataDir;
    await first.service.close();
    write(home, "agents/early/agent.toml", `model = "gpt-4o"\ndescription = "Here from the start"\n`);
    server = await startTestServer({ dataDir: home, home });
    const { body } = await call(server, "GET", "/api/agents?realmId=realm-default");
    expect(JSON.stringify(body)).toContain("Here from the start");
  });

  it("gives a declared agent its embedding_model, checked as the API checks it", async () => {
    server = await startTestServer();
    const home = server.dataDir;
    write(home, "agents/rememberer/agent.toml", `model = "gpt-4o"\nembedding_model = "nomic"\n`);
    write(home, "agents/offline/agent.toml", `model = "gpt-4o"\nembedding_model = "ollama/bge-m3"\n`);
    write(home, "agents/confused/agent.toml", `model = "gpt-4o"\nembedding_model = "gpt-4o-mini"\n`);
    const first = await call(server, "POST", "/api/config/reload", {});
    expect(first.body.agents.created).toEqual(["offline", "rememberer"]);
    expect(first.body.problems).toEqual([
      {
        file: join(home, "agents/confused/agent.toml"),
        message: expect.stringContaining('embeddingModel: "gpt-4o-mini" is the chat model gpt-4o-mini'),
      },
    ]);
    const { body } = await call(server, "GET", "/api/agents?realmId=realm-default");
    const byName = Object.fromEntries(
      (body.agents as Array<{ name: string; embeddingModel?: string }>).map((agent) => [
        agent.name,
        agent.embeddingModel,
      ]),
    );
    expect(byName).toEqual({ rememberer: "nomic-embed-text", offline: "ollama/bge-m3" });
    write(
      home,
      "agents/rememberer/agent.toml",
      `model = "gpt-4o"\nembedding_model = "text-embedding-3-small"\n`,
    );
    write(home, "agents/confused/agent.toml", `model = "gpt-4o"\n`);
    const second = await call(server, "POST", "/api/config/reload", {});
    expect(second.body.agents).toEqual({
      created: ["confused"],
      updated: ["rememberer"],
      unchanged: ["offline"],
    });
    expect(second.body.problems).toEqual([]);
    const rememberer = (await call(server, "GET", "/api/agents?realmId=realm-default")).body.agents.find(
      (agent: { name: string }) => agent.name === "rememberer",
    );
    expect(rememberer.embeddingModel).toBe("text-embedding-3-small");
  });

  it("schedules a hand's task for its agent once, however often it is reloaded, and the task reaches the agent", async () => {
    const fakeModel = await startFakeOpenAI();
    server = await startTestServer({
      env: { ...process.env, OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fakeModel.baseUrl },
    });
    try {
      const home = server.dataDir;
      write(home, "agents/digest/agent.toml", `model = "gpt-4o"\n`);
      write(
        home,
        "hands/morning/HAND.toml",
        `agent = "digest"\nschedule = "0 * * * * *"\ntask = "Summarise the overnight news"\n`,
      );
      expect((await call(server, "POST", "/api/config/reload", {})).body.hands).toEqual({
        scheduled: ["morning"],
        unchanged: [],
      });
      expect((await call(server, "POST", "/api/config/reload", {})).body.hands).toEqual({
        scheduled: [],
        unchanged: ["morning"],
      });
      await dueNow(server, "digest");
      for (let i = 0; i < 50 && !JSON.stringify(fakeModel.requests).includes("overnight news"); i++)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(JSON.stringify(fakeModel.requests)).toContain("Summarise the overnight news");
      write(
        home,
        "hands/morning/HAND.toml",
        `agent = "digest"\nschedule = "0 0 5 1 1 *"\ntask = "Once a year"\n`,
      );
      expect((await call(server, "POST", "/api/config/reload", {})).body.hands).toEqual({
        scheduled: ["morning"],
        unchanged: [],
      });
      const { body: agents } = await call(server, "GET", "/api/agents?realmId=realm-default");
      const digest = (agents.agents ?? agents).find((agent: { name: string }) => agent.name === "digest");
      const jobs = (await server.service.engine.trigger({
        function_id: "tool::cron_list",
        payload: { agentId: digest.id },
        auth: { kind: "realm", realmId: "realm-default", keyId: `agent:${digest.id}` },
      })) as { jobs: Array<{ message: string }> };
      expect(jobs.jobs.map((job) => job.message)).toEqual(["Once a year"]);
    } finally {
      await fakeModel.close();
    }
  });

  it("runs a hand that names steps as a workflow of its agents' turns, on its schedule", async () => {
    const fakeModel = await startFakeOpenAI();
    server = await startTestServer({
      env: { ...process.env, OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fakeModel.baseUrl },
    });
    try {
      const home = server.dataDir;
      write(home, "agents/scout/agent.toml", `model = "gpt-4o"\n`);
      write(home, "agents/editor/agent.toml", `model = "gpt-4o"\n`);
      write(
        home,
        "hands/digest/HAND.toml",
        `agent = "editor"\nschedule = "* * * * * *"\ntask = "AI agents"\n\n[[steps]]\nname = "gather"\nagent = "scout"\ntask = "Gather the news about the topic"\n\n[[steps]]\nname = "edit"\nagent = "editor"\ntask = "Edit the news into a digest"\n`,
      );
      const first = await call(server, "POST", "/api/config/reload", {});
      expect(first.body.problems).toEqual([]);
      expect(first.body.hands).toEqual({ scheduled: ["digest"], unchanged: [] });
      let runs: Array<{ status: string }> = [];
      for (let i = 0; i < 60 && !runs.some((run) => run.status === "completed"); i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        runs = (await call(server, "GET", "/api/workflows/hand-digest/runs")).body.runs ?? [];
      }
      expect(runs.some((run) => run.status === "completed")).toBe(true);
      const prompts = JSON.stringify(fakeModel.requests);
      expect(prompts).toContain("Gather the news about the topic");
      expect(prompts).toContain("Edit the news into a digest");
      expect(prompts).toContain("AI agents");
      write(
        home,
        "hands/digest/HAND.toml",
        `agent = "editor"\nschedule = "0 0 5 1 1 *"\n\n[[steps]]\nname = "gather"\nagent = "nobody"\ntask = "x"\n`,
      );
      const bad = await call(server, "POST", "/api/config/reload", {});
      expect(bad.body.problems).toEqual([
        expect.objectContaining({
          message:
            "steps.0.agent: no agent nobody is declared in agents/ (realm realm-default) or made over the API in that realm",
        }),
      ]);
    } finally {
      await fakeModel.close();
    }
  });
});

/** Moves the default realm agent's one scheduled job to now, so the sweep fires it within a second. */
async function dueNow(server: TestServer, agentName: string): Promise<void> {
  const { body } = await call(server, "GET", "/api/agents?realmId=realm-default");
  const agent = (body.agents ?? body).find((entry: { name: string }) => entry.name === agentName);
  const trigger = (function_id: string, payload: unknown) =>
    server.service.engine.trigger({ function_id, payload });
  const { items } = (await trigger("state::list", { scope: jobsScope("realm-default"), limit: 100 })) as {
    items: Array<{ value: Job }>;
  };
  const job = items.map((item) => item.value).find((entry) => entry.agentId === agent.id) as Job;
  const due = { ...job, nextRunAt: new Date().toISOString() };
  await trigger("state::batch", {
    ops: [
      { type: "delete", scope: DUE_SCOPE, key: dueKey(job) },
      { type: "set", scope: jobsScope("realm-default"), key: job.id, value: due },
      { type: "set", scope: DUE_SCOPE, key: dueKey(due), value: { realmId: "realm-default", jobId: job.id } },
    ],
  });
}
