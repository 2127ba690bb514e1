import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeOpenAI, startFakeOpenAI } from "../helpers/fake-openai.ts";
import {
  type CliResult,
  freePort,
  makeDataDir,
  removeDir,
  runCli,
  type ServeProcess,
  startServe,
} from "../helpers/process.ts";

const ADMIN_KEY = "cli-daily-admin-key-0123456789abcdef";
let dataDir: string;
let server: ServeProcess;
let fake: FakeOpenAI;

/** `agentos <args>` against the running service, as a user with the admin key in the environment. */
function agentos(...args: string[]): Promise<CliResult> {
  return runCli(args, { AGENTOS_URL: server.url, AGENTOS_API_KEY: ADMIN_KEY, AGENTOS_DATA_DIR: dataDir });
}

async function ok(...args: string[]): Promise<string> {
  const result = await agentos(...args);
  expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(0);
  return result.stdout;
}

beforeAll(async () => {
  fake = await startFakeOpenAI();
  dataDir = makeDataDir();
  server = await startServe({
    dataDir,
    env: { AGENTOS_API_KEY: ADMIN_KEY, OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fake.baseUrl },
  });
});
afterAll(async () => {
  await server?.stop();
  await fake?.close();
  removeDir(dataDir);
});

describe("agentos agents", () => {
  it("creates, lists (table and --json), updates, chats with streamed output, and deletes an agent", async () => {
    const created = JSON.parse(await ok("agents", "create", "helper", "--prompt", "Be terse.", "--json"));
    expect(created).toMatchObject({ name: "helper", model: "gpt-4o", systemPrompt: "Be terse." });
    const listed = await ok("agents", "list");
    expect(listed.split("\n")[0]).toMatch(/^ID\s+NAME\s+MODEL\s+REALM\s+STATUS$/);
    expect(listed).toContain(`${created.id}  helper`);
    expect(JSON.parse(await ok("agents", "list", "--json")).map((a: { id: string }) => a.id)).toContain(
      created.id,
    );

    expect(await ok("agents", "update", created.id, "--temperature", "0.2")).toContain("Updated helper");
    fake.reply({ content: "Hello from the agent." });
    const chat = await ok("agents", "chat", created.id, "--message", "hi");
    expect(chat).toContain("agent> Hello from the agent.");
    const events = (await ok("agents", "chat", created.id, "--message", "again", "--json"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(events[0].event).toBe("start");
    expect(events.at(-1)).toMatchObject({ event: "done", data: { content: "ok" } });

    expect(await ok("agents", "delete", created.id)).toContain(`Deleted ${created.id}`);
    expect(await ok("agents", "list")).not.toContain(created.id);
  });

  it("says what went wrong, without a stack: an unknown agent, nothing to update, an unreachable service", async () => {
    const missing = await agentos("agents", "delete", "agent-nope");
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("Agent agent-nope not found (HTTP 404)");
    expect(missing.stderr).not.toMatch(/^\s+at /m);
    const nothing = await agentos("agents", "update", "agent-nope");
    expect(nothing.stderr).toContain("nothing to change");
    const away = await runCli(["agents", "list"], {
      AGENTOS_URL: "http://127.0.0.1:9",
      AGENTOS_API_KEY: ADMIN_KEY,
    });
    expect(away.code).not.toBe(0);
    expect(away.stderr).toContain("cannot reach the service at http://127.0.0.1:9");
  });

  it("finds the service from AGENTOS_PORT or AGENTOS_URL, and says which address it tried and how to change it", async () => {
    const byPort = await runCli(["agents", "list", "--json"], {
      AGENTOS_PORT: String(server.port),
      AGENTOS_API_KEY: ADMIN_KEY,
    });
    expect(byPort.code, byPort.stderr).toBe(0);
    const health = await runCli(["health"], { AGENTOS_URL: server.url, AGENTOS_API_KEY: ADMIN_KEY });
    expect(health.code, health.stderr).toBe(0);
    expect(JSON.parse(health.stdout).status).toBeDefined();

    const port = String(await freePort());
    for (const args of [["agents", "list"], ["health"]]) {
      const away = await runCli(args, { AGENTOS_PORT: port, AGENTOS_API_KEY: ADMIN_KEY });
      expect(away.code).not.toBe(0);
      expect(away.stderr).toContain(`cannot reach the service at http://127.0.0.1:${port} (AGENTOS_PORT)`);
      expect(away.stderr).toContain("AGENTOS_URL=http://<host>:<port>");
    }
    const elsewhere = await runCli(["agents", "list"], {
      AGENTOS_URL: `http://127.0.0.1:${port}`,
      AGENTOS_API_KEY: ADMIN_KEY,
    });
    expect(elsewhere.stderr).toContain(`http://127.0.0.1:${port} (AGENTOS_URL)`);
    const malformed = await runCli(["agents", "list"], { AGENTOS_URL: "localhost 3111" });
    expect(malformed.code).not.toBe(0);
    expect(malformed.stderr).toContain("AGENTOS_URL is not a URL: localhost 3111");
  });

  it("takes an agent's name where its id is asked: chat, update, delete", async () => {
    const created = JSON.parse(await ok("agents", "create", "analyst", "--json"));
    fake.reply({ content: "Analysed." });
    expect(await ok("agents", "chat", "analyst", "--message", "hi")).toContain("agent> Analysed.");
    expect(await ok("agents", "update", "analyst", "--temperature", "0.3")).toContain(
      `Updated analyst (${created.id})`,
    );
    expect(await ok("agents", "delete", "analyst")).toContain(`Deleted ${created.id}`);
    const gone = await agentos("agents", "chat", "analyst", "--message", "hi");
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain("Agent analyst not found (HTTP 404)");
  });

  it("shows an agent's tool calls by their function ids in the chat", async () => {
    await ok("agents", "create", "hasher-agent", "--tools", "tool::hash_compute");
    fake.reply(
      { toolCalls: [{ name: "tool__hash_compute", arguments: { text: "abc" } }] },
      { content: "Hashed." },
    );
    const chat = await ok("agents", "chat", "hasher-agent", "--message", "hash abc");
    expect(chat).toContain("[tool::hash_compute {");
    expect(chat).toContain("[tool::hash_compute answered]");
    expect(chat).not.toContain("tool__hash_compute");
  });
});

describe("agentos workflows, realms and functions", () => {
  it("lists, runs and shows the runs of a workflow", async () => {
    const response = await fetch(`${server.url}/api/workflows`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({
        id: "hasher",
        name: "hasher",
        steps: [{ name: "hash", functionId: "tool::hash_compute", args: { text: "{{input}}" } }],
      }),
    });
    expect(response.status).toBe(201);
    expect(await ok("workflows", "list")).toMatch(/hasher\s+hasher\s+realm-default\s+1\s+1/);
    const run = await ok("workflows", "run", "hasher", "--input", "abc");
    expect(run).toMatch(/^Run run-\S+: completed/);
    expect(run).toContain("ba7816bf8f01cfea");
    const runs = JSON.parse(await ok("workflows", "runs", "hasher", "--json"));
    expect(runs.runs[0].status).toBe("completed");
  });

  it("runs a workflow by its name, as an agent named with --agent", async () => {
    const response = await fetch(`${server.url}/api/workflows`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({
        id: "wf-digest",
        name: "digest",
        steps: [{ name: "hash", functionId: "tool::hash_compute", args: { text: "{{input}}" } }],
      }),
    });
    expect(response.status).toBe(201);
    const agent = JSON.parse(
      await ok("agents", "create", "digester", "--tools", "tool::hash_compute", "--json"),
    );
    const run = JSON.parse(
      await ok("workflows", "run", "digest", "--input", "abc", "--agent", "digester", "--json"),
    );
    expect(run.status).toBe("completed");
    const stored = await fetch(`${server.url}/api/workflows/runs/${run.runId}`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(await stored.json()).toMatchObject({ workflowId: "wf-digest", agentId: agent.id });
    const runs = await ok("workflows", "runs", "digest");
    expect(runs.split("\n")[0]).toMatch(/^RUN\s+STATUS/);
    expect(runs).toContain(run.runId);
    const unknown = await agentos("workflows", "run", "digest", "--agent", "nobody");
    expect(unknown.stderr).toContain("Agent nobody not found (HTTP 404)");
  });

  it("creates, shows, pauses, exports, imports and deletes a realm", async () => {
    const realm = JSON.parse(await ok("realms", "create", "Acme", "--owner", "ops@acme.test", "--json"));
    expect(await ok("realms", "list")).toContain(`${realm.id}  Acme`);
    expect(await ok("realms", "pause", realm.id)).toContain("is Paused");
    expect(JSON.parse(await ok("realms", "get", realm.id, "--json")).status).toBe("Paused");
    const file = `${dataDir}/acme-export.json`;
    expect(await ok("realms", "export", realm.id, "--file", file)).toContain(file);
    const imported = JSON.parse(await ok("realms", "import", file, "--owner", "new@acme.test", "--json"));
    expect(imported.realmId).not.toBe(realm.id);
    expect(await ok("realms", "delete", realm.id)).toContain("Deleted realm");
  });

  it("realms export --file leaves the file owner-only even when it existed readable to others", async () => {
    const realm = JSON.parse(await ok("realms", "create", "Exported", "--json"));
    const file = `${dataDir}/exported.json`;
    // An earlier export, or a file `touch` made under umask 022: a mode given to open() is not applied to it.
    writeFileSync(file, "{}\n", { mode: 0o644 });
    chmodSync(file, 0o644);

    await ok("realms", "export", realm.id, "--file", file);

    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, "utf8"))).not.toEqual({});
  });

  it("lists functions, filtered by prefix", async () => {
    const listed = await ok("functions", "--prefix", "tool::hash");
    expect(listed).toContain("tool::hash_compute");
    expect(JSON.parse(await ok("functions", "--json")).length).toBeGreaterThan(50);
  });
});
