import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolTargets } from "../../../src/workers/migrate/tools.ts";
import { call } from "../../helpers/control-plane.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../../helpers/fake-openai.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

const FIXTURES = join(import.meta.dirname, "../../fixtures/migrate");
const NOTES_SERVER = join(import.meta.dirname, "../../fixtures/mcp/notes-server.mjs");
const FRAMEWORKS = ["openclaw", "langchain", "langgraph", "crewai", "autogen", "openfang"] as const;
/** Every secret value in the fixtures: none may land in a written file or a report. */
const SECRET_VALUES = [
  "sk-openclaw-test-key-0001",
  "123456:ABC-openclaw-telegram-token",
  "xoxb-openclaw-slack-token",
  "openclaw-slack-signing-secret",
  "sk-langchain-test-key-0002",
  "tvly-langchain-test-key",
  "sk-langgraph-test-key-0003",
  "sk-crewai-test-key-0004",
  "serper-crewai-test-key",
  "sk-autogen-test-key-0005",
  "notes-secret-from-autogen",
  "sk-openfang-test-key-0006",
  "987654:openfang-telegram-token",
];

let base: string;
let home: string;
let fake: FakeOpenAI;
let server: TestServer;

const configPaths = () => ({
  openclaw: join(base, "openclaw/.openclaw/openclaw.json"),
  langchain: join(base, "langchain"),
  langgraph: join(base, "langgraph/langgraph.json"),
  crewai: join(base, "crewai"),
  autogen: join(base, "autogen/team.json"),
  openfang: join(base, "openfang"),
});

function start(): Promise<TestServer> {
  return startTestServer({
    dataDir: home,
    home,
    env: {
      ...process.env,
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: fake.baseUrl,
      // Migrated agents keep their Anthropic models, which need a key to be created (never called here).
      ANTHROPIC_API_KEY: "sk-ant-test-unused",
      AGENTOS_MIGRATE_ROOTS: base,
    },
  });
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter((entry) => statSync(join(dir, entry)).isFile())
    .sort();
}

async function agentsByName(): Promise<Map<string, { id: string; model: string; tools: string[] }>> {
  const { body } = await call(server, "GET", "/api/agents?realmId=realm-default&limit=500");
  return new Map((body.agents ?? body).map((agent: { name: string }) => [agent.name, agent]));
}

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), "agentos-migrate-src-"));
  home = mkdtempSync(join(tmpdir(), "agentos-migrate-home-"));
  cpSync(FIXTURES, base, { recursive: true });
  // The AutoGen team starts its MCP server with `node notes-server.mjs`: point it at this Node and the test server.
  const team = join(base, "autogen/team.json");
  writeFileSync(
    team,
    readFileSync(team, "utf8")
      .replace('"command": "node"', `"command": ${JSON.stringify(process.execPath)}`)
      .replace('"notes-server.mjs"', JSON.stringify(NOTES_SERVER)),
  );
  fake = await startFakeOpenAI();
  server = await start();
});

afterAll(async () => {
  await server?.service.close();
  await fake?.close();
  rmSync(base, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

describe("migration from six frameworks", () => {
  it("scan finds each framework with its configuration and version", async () => {
    const { status, body } = await call(
      server,
      "GET",
      `/api/migrate/scan?baseDir=${encodeURIComponent(base)}`,
    );
    expect(status).toBe(200);
    expect(body.summary).toEqual({ scanned: 6, found: 6, migratable: 6 });
    const found = Object.fromEntries(
      body.frameworks.map((entry: { framework: string; configPath: string; version: string | null }) => [
        entry.framework,
        [relative(base, entry.configPath), entry.version],
      ]),
    );
    expect(found).toEqual({
      openclaw: ["openclaw/.openclaw/openclaw.json", "2026.2.3"],
      langchain: ["langchain", "0.3.7"],
      langgraph: ["langgraph/langgraph.json", "0.2.60"],
      crewai: ["crewai/src/trip_planner/config/agents.yaml", "0.86.0"],
      autogen: ["autogen/team.json", "0.4.7"],
      openfang: ["openfang", null],
    });
  });

  it("maps tools only to functions the service has", async () => {
    const { functions } = (await server.service.engine.trigger({
      function_id: "engine::functions::list",
      payload: {},
    })) as {
      functions: Array<{ function_id: string }>;
    };
    const registered = new Set(functions.map((fn) => fn.function_id));
    for (const target of toolTargets()) expect(registered.has(target), target).toBe(true);
  });

  it("a dry run writes nothing and says what it would write and skip, and why", async () => {
    const vaultBefore = (await call(server, "GET", "/api/vault")).body;
    for (const framework of FRAMEWORKS) {
      const { status, body } = await call(server, "POST", `/api/migrate/${framework}`, {
        dryRun: true,
        configPath: configPaths()[framework],
      });
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body.dryRun).toBe(true);
      expect(body.items.length).toBeGreaterThan(0);
      expect(body.items.every((item: { status: string }) => item.status === "would_write")).toBe(true);
      expect(JSON.stringify(body)).not.toMatch(new RegExp(SECRET_VALUES.join("|")));
    }
    expect(filesUnder(home).filter((file) => !file.startsWith("state") && !file.includes("vault"))).toEqual(
      filesUnder(home).filter(
        (file) =>
          !file.startsWith("state") &&
          !file.includes("vault") &&
          !/^(agents|hands|config|integrations|workflows|sessions|migrations)\//.test(file),
      ),
    );
    expect(existsSync(join(home, "agents"))).toBe(false);
    expect(existsSync(join(home, "migrations"))).toBe(false);
    expect((await call(server, "GET", "/api/vault")).body).toEqual(vaultBefore);

    const { body: openclaw } = await call(server, "POST", "/api/migrate/openclaw", {
      dryRun: true,
      configPath: configPaths().openclaw,
    });
    expect(openclaw.items.map((item: { path: string }) => item.path).sort()).toEqual([
      "agents/lab/agent.toml",
      "agents/main/agent.toml",
      "agents/work/agent.toml",
      "config/channels/slack-c0workroom.toml",
      "config/channels/telegram-1001234567890.toml",
      "data/sessions/main-s-2026-02-01.json",
      "hands/inbox-check/HAND.toml",
      "hands/morning-brief/HAND.toml",
      "integrations/weather_lookup.toml",
    ]);
    expect(openclaw.skipped).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: "cron",
          name: "dentist",
          reason: "a at schedule has no cron equivalent",
        }),
        expect.objectContaining({ type: "channel", reason: expect.stringMatching(/binds a whole account/) }),
      ]),
    );
    expect(openclaw.flags).toEqual(
      expect.arrayContaining([
        {
          type: "agent",
          name: "lab",
          message: "model mystery-model-9000 is not in the catalog; the agent uses the realm's default model",
        },
        expect.objectContaining({ type: "tool", name: "weather_lookup" }),
      ]),
    );
    expect(openclaw.secrets.map((secret: { vaultName: string }) => secret.vaultName).sort()).toEqual([
      "channel:slack:bot_token",
      "channel:slack:signing_secret",
      "channel:telegram:bot_token",
      "provider:openai:api_key",
    ]);
  });

  it("migrates each framework: our files written, secrets only in the vault, agents loaded with catalog models", async () => {
    for (const framework of FRAMEWORKS) {
      const { status, body } = await call(server, "POST", `/api/migrate/${framework}`, {
        configPath: configPaths()[framework],
      });
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body.summary.migrated, framework).toBeGreaterThan(0);
      expect(body.loaded.problems, `${framework}: ${JSON.stringify(body.loaded.problems)}`).toEqual([]);
      if (framework === "autogen")
        expect(body.flags).toContainEqual({
          type: "tool",
          name: "notes",
          message: expect.stringMatching(
            /notes\.toml is disabled until reviewed: it would run `.+` as the service/,
          ),
        });
      expect(existsSync(join(home, "migrations", `${body.id}.json`))).toBe(true);
    }
    for (const file of filesUnder(home).filter((entry) =>
      /^(agents|hands|config|integrations|workflows|sessions|migrations)\//.test(entry),
    ))
      expect(readFileSync(join(home, file), "utf8"), file).not.toMatch(new RegExp(SECRET_VALUES.join("|")));
    const vault = (await call(server, "GET", "/api/vault")).body.keys.map(
      (entry: { key: string }) => entry.key,
    );
    expect(vault).toEqual(
      expect.arrayContaining([
        "provider:openai:api_key",
        "channel:slack:signing_secret",
        "channel:telegram:bot_token",
        "env:TAVILY_API_KEY",
        "env:SERPER_API_KEY",
        "mcp:notes:notes_token",
      ]),
    );
    const agents = await agentsByName();
    const models = Object.fromEntries([...agents].map(([name, agent]) => [name, agent.model]));
    expect(models).toMatchObject({
      main: "gpt-4o-mini",
      work: "claude-sonnet-4-6",
      support_agent: "gpt-4o-mini",
      data_analyst: "claude-sonnet-4-6",
      researcher: "gpt-4o",
      writer: "gpt-4o",
      city_expert: "gpt-4o-mini",
      travel_writer: expect.any(String),
      planner: "gpt-4o",
      critic: "gpt-4o-mini",
      assistant: "gpt-4o-mini",
      coder: "claude-sonnet-4-6",
      "researcher-hand": "gpt-4o-mini",
    });
    expect(agents.get("support_agent")?.tools).toEqual(
      expect.arrayContaining(["tool::web_search", "mcp::lookup_order::*", "mcp::refund_order::*"]),
    );
    expect(agents.get("city_expert")?.tools).toEqual(
      expect.arrayContaining(["tool::web_search", "tool::web_fetch"]),
    );
    expect(agents.get("coder")?.tools).toEqual(
      expect.arrayContaining(["tool::shell_exec", "tool::git_status", "mcp::jira_create_issue::*"]),
    );
    const { body: workflows } = await call(server, "GET", "/api/workflows");
    expect(workflows.map((workflow: { id: string }) => workflow.id)).toEqual(
      expect.arrayContaining(["trip-planner", "newsroom", "team"]),
    );
    const { body: bindings } = await call(server, "GET", "/api/channels");
    expect(
      bindings.map(
        (binding: { platform: string; channelId: string }) => `${binding.platform}:${binding.channelId}`,
      ),
    ).toEqual(expect.arrayContaining(["slack:C0WORKROOM", "telegram:-1001234567890", "telegram:-100200300"]));
  });

  it("a second migration changes nothing", async () => {
    const before = await agentsByName();
    for (const framework of FRAMEWORKS) {
      const { body } = await call(server, "POST", `/api/migrate/${framework}`, {
        configPath: configPaths()[framework],
      });
      expect(
        body.items.every((item: { status: string }) => item.status === "unchanged"),
        framework,
      ).toBe(true);
      expect(body.loaded.agents.created).toEqual([]);
      expect(body.loaded.agents.updated).toEqual([]);
    }
    const after = await agentsByName();
    expect([...after].map(([name, agent]) => [name, agent.id])).toEqual(
      [...before].map(([name, agent]) => [name, agent.id]),
    );
  });

  it("after a restart the agents answer on the model with their tools, the hand is scheduled and the workflow runs", async () => {
    const ids = await agentsByName();
    await server.service.close();
    // The AutoGen workbench's MCP server was written disabled: the operator reviews it and turns it on.
    const notes = join(home, "integrations/notes.toml");
    const reviewed = readFileSync(notes, "utf8");
    expect(reviewed).toMatch(/^enabled = false$/m);
    expect(reviewed).toMatch(/^realms = \[ "realm-default" \]$/m);
    writeFileSync(notes, reviewed.replace(/^enabled = false$/m, "enabled = true"));
    server = await start();
    const agents = await agentsByName();
    expect(agents.get("critic")?.id).toBe(ids.get("critic")?.id);

    // The AutoGen critic's MCP workbench is an integration: its tools are the critic's, and get the vault's secret.
    fake.reply(
      { toolCalls: [{ name: "mcp__notes__read_env", arguments: { name: "NOTES_TOKEN" } }] },
      { content: "APPROVE" },
    );
    const critic = agents.get("critic")?.id;
    const reply = await call(server, "POST", `/api/agents/${critic}/message`, {
      message: "Review: step 1, step 2.",
    });
    expect(reply.body.content).toBe("APPROVE");
    expect(JSON.stringify(fake.requests.at(-1))).toContain("notes-secret-from-autogen");

    const main = agents.get("main")?.id as string;
    const jobs = (await server.service.engine.trigger({
      function_id: "tool::cron_list",
      payload: { agentId: main },
      auth: { kind: "realm", realmId: "realm-default", keyId: `agent:${main}` },
    })) as { jobs: Array<{ message: string; schedule: string; nextRunAt: string }> };
    expect(jobs.jobs).toEqual([
      expect.objectContaining({
        message: "Give me the morning brief: weather, calendar, news.",
        schedule: "0 7 * * *",
      }),
    ]);

    fake.reply({ content: "- Sights: Belém Tower" }, { content: "Day 1: Belém" });
    const run = await call(server, "POST", "/api/workflows/run", {
      workflowId: "trip-planner",
      input: "Lisbon",
    });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(run.body.status).toBe("completed");
    const prompts = JSON.stringify(fake.requests.slice(-2));
    expect(prompts).toContain("Research the city");
    expect(prompts).toContain("Lisbon");
    expect(prompts).toContain("Sights: Belém Tower");
  });

  it("reports every run, by framework and by type, in JSON and Markdown", async () => {
    const { body } = await call(server, "GET", "/api/migrate/report?format=json");
    expect(body.aggregated.reports).toBe(12);
    expect(Object.keys(body.aggregated.byFramework).sort()).toEqual([...FRAMEWORKS].sort());
    expect(body.aggregated.byFramework.openclaw.runs).toBe(2);
    expect(body.aggregated.byType.agent.migrated).toBeGreaterThanOrEqual(14);
    expect(body.aggregated.byType.cron.skipped).toBeGreaterThan(0);
    const { body: markdown } = await call(server, "GET", "/api/migrate/report?format=markdown");
    expect(markdown.markdown).toContain("| openclaw | 2 |");
    expect(markdown.markdown).toContain("| agent |");
  });

  it("refuses bad input with the file and line, and paths it may not read", async () => {
    const missing = await call(server, "POST", "/api/migrate/openclaw", {
      configPath: join(base, "nowhere.json"),
    });
    expect(missing).toMatchObject({
      status: 404,
      body: { error: expect.stringContaining("nowhere.json does not exist") },
    });
    const outside = await call(server, "POST", "/api/migrate/openclaw", { configPath: "/etc/hostname" });
    expect(outside).toMatchObject({
      status: 403,
      body: { error: expect.stringMatching(/outside the directories/) },
    });
    mkdirSync(join(base, "broken"), { recursive: true });
    writeFileSync(join(base, "broken/openclaw.json"), "{\n  agents: {\n    list: [ { id: 'a' ,, ] }\n}\n");
    const json5 = await call(server, "POST", "/api/migrate/openclaw", {
      configPath: join(base, "broken/openclaw.json"),
    });
    expect(json5).toMatchObject({
      status: 422,
      body: { error: expect.stringMatching(/openclaw\.json:3: is not valid JSON5/) },
    });
    mkdirSync(join(base, "badcrew/config"), { recursive: true });
    writeFileSync(join(base, "badcrew/config/agents.yaml"), "writer:\n  role: Writer\n  goal: [unclosed\n");
    const yaml = await call(server, "POST", "/api/migrate/crewai", { configPath: join(base, "badcrew") });
    expect(yaml).toMatchObject({
      status: 422,
      body: { error: expect.stringMatching(/agents\.yaml:\d+: is not valid YAML/) },
    });
    // A project whose persona file is a link (here to the service's environment) is refused, naming it.
    const linked = join(base, "linked/.openclaw");
    cpSync(join(base, "openclaw/.openclaw"), linked, { recursive: true });
    rmSync(join(linked, "workspace/SOUL.md"));
    symlinkSync("/proc/self/environ", join(linked, "workspace/SOUL.md"));
    const environ = await call(server, "POST", "/api/migrate/openclaw", {
      dryRun: true,
      configPath: join(linked, "openclaw.json"),
    });
    expect(environ).toMatchObject({
      status: 422,
      body: { error: expect.stringMatching(/SOUL\.md: is reached through a symbolic link/) },
    });
    expect(JSON.stringify(environ.body)).not.toContain("OPENAI_API_KEY");
    const badPython = await call(server, "POST", "/api/migrate/langchain", {
      dryRun: true,
      configPath: configPaths().langchain,
    });
    expect(badPython.body.errors).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/scratch\.py:3: is not valid Python/) }),
    ]);
  });
});
