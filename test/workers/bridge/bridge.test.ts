import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createAgent, newRealm, realmKey } from "../../helpers/control-plane.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../../helpers/fake-openai.ts";
import { eventually } from "../../helpers/iii.ts";
import { processesWithEnv } from "../../helpers/procs.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

let server: TestServer;
let fake: FakeOpenAI;
let tools: string;
let hook: Server;
let hookUrl: string;
const originalPath = process.env.PATH;

/** Fake coding CLIs on PATH, each printing its tool's real output format around the prompt it got. */
const FAKE_TOOLS: Record<string, string> = {
  claude: `[ "$1" = "-p" ] && [ "$2" = "--output-format" ] && [ "$#" = 3 ] || exit 2
read -r prompt
printf '%s\\n' "{\\"type\\":\\"result\\",\\"subtype\\":\\"success\\",\\"is_error\\":false,\\"result\\":\\"claude did: $prompt\\",\\"session_id\\":\\"s1\\",\\"total_cost_usd\\":0.01,\\"usage\\":{\\"input_tokens\\":3,\\"output_tokens\\":4}}"`,
  codex: `[ "$1" = "exec" ] && [ "$2" = "--json" ] && [ "$3" = "--" ] || exit 2
echo '{"type":"thread.started","thread_id":"t1"}'
echo '{"type":"turn.started"}'
printf '%s\\n' "{\\"type\\":\\"item.completed\\",\\"item\\":{\\"id\\":\\"i1\\",\\"type\\":\\"agent_message\\",\\"text\\":\\"codex did: $4\\"}}"
echo '{"type":"turn.completed","usage":{"input_tokens":5,"cached_input_tokens":0,"output_tokens":6}}'`,
  "cursor-agent": `[ "$1" = "-p" ] && [ "$4" = "--" ] || exit 2
prompt=$(printf '%s' "$5")
printf '%s\\n' "{\\"type\\":\\"result\\",\\"subtype\\":\\"success\\",\\"is_error\\":false,\\"duration_ms\\":5,\\"result\\":\\"cursor did: $prompt\\",\\"session_id\\":\\"c1\\"}"`,
  opencode: `[ "$1" = "run" ] && [ "$2" = "--format" ] && [ "$4" = "--" ] || exit 2
echo '{"type":"step_start","sessionID":"o1","part":{"type":"step-start"}}'
printf '%s\\n' "{\\"type\\":\\"text\\",\\"sessionID\\":\\"o1\\",\\"part\\":{\\"type\\":\\"text\\",\\"text\\":\\"opencode did: $5\\"}}"
echo '{"type":"step_finish","sessionID":"o1","part":{"type":"step-finish","reason":"stop","tokens":{"input":7,"output":8}}}'`,
};

beforeAll(async () => {
  tools = mkdtempSync(join(tmpdir(), "agentos-tools-"));
  for (const [name, body] of Object.entries(FAKE_TOOLS)) {
    writeFileSync(join(tools, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(tools, name), 0o755);
  }
  process.env.PATH = `${tools}:${originalPath}`;
  hook = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ received: JSON.parse(body) }));
    });
  });
  await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve));
  hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
  fake = await startFakeOpenAI();
  server = await startTestServer({
    env: { AGENTOS_ALLOW_PRIVATE_NETWORK: "1", OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fake.baseUrl },
  });
});
afterAll(async () => {
  process.env.PATH = originalPath;
  await server.close();
  await fake.close();
  await new Promise((resolve) => hook.close(resolve));
  rmSync(tools, { recursive: true, force: true });
});

async function register(fields: Record<string, unknown>, key?: string) {
  return call(server, "POST", "/api/bridge/runtimes", { name: "rt", ...fields }, key);
}

async function runToEnd(runtimeId: string, fields: Record<string, unknown> = {}, key?: string) {
  const invoked = await call(server, "POST", "/api/bridge/invoke", { runtimeId, ...fields }, key);
  expect(invoked.status, JSON.stringify(invoked.body)).toBe(202);
  return eventually(async () => {
    const { body } = await call(server, "GET", `/api/bridge/runs/${invoked.body.runId}`, undefined, key);
    return body.status === "running" ? undefined : body;
  }, 15_000);
}

const sh = (script: string, extra: Record<string, unknown> = {}) =>
  register({ kind: "process", command: "sh", args: ["-c", script], ...extra });

describe("process runtimes", () => {
  it("gives the context on stdin and in AGENTOS_CONTEXT, and parses JSON output", async () => {
    const runtime = await sh('read line; printf \'{"stdin":%s,"env":%s}\' "$line" "$AGENTOS_CONTEXT"');
    expect(runtime.status, JSON.stringify(runtime.body)).toBe(201);
    const run = await runToEnd(runtime.body.id, { context: { task: "sum" }, agentId: "ext-1" });
    expect(run).toMatchObject({ status: "completed", exitCode: 0, agentId: "ext-1", error: null });
    expect(run.output.stdin).toMatchObject({ context: { task: "sum" }, agentId: "ext-1", runId: run.id });
    expect(run.output.env).toEqual(run.output.stdin);
  });

  it("fails a non-zero exit with its stderr", async () => {
    const runtime = await sh("echo broken >&2; exit 3");
    const run = await runToEnd(runtime.body.id);
    expect(run).toMatchObject({ status: "failed", exitCode: 3, error: "Exited with 3: broken" });
  });

  it("times out, and kills the whole process group", async () => {
    const runtime = await sh("sleep 30 & sleep 30; wait", { timeoutSecs: 1 });
    const run = await runToEnd(runtime.body.id);
    expect(run.status).toBe("timed_out");
    await eventually(() => processesWithEnv("AGENTOS_BRIDGE_RUN", run.id).length === 0);
  });

  it("cancels a running run, leaving no process behind", async () => {
    const runtime = await sh("sleep 30 & sleep 30; wait");
    const invoked = await call(server, "POST", "/api/bridge/invoke", { runtimeId: runtime.body.id });
    await eventually(() => processesWithEnv("AGENTOS_BRIDGE_RUN", invoked.body.runId).length >= 2);
    const cancelled = await call(server, "POST", `/api/bridge/runs/${invoked.body.runId}/cancel`);
    expect(cancelled.body).toMatchObject({ status: "cancelled" });
    expect(processesWithEnv("AGENTOS_BRIDGE_RUN", invoked.body.runId)).toEqual([]);
    expect((await call(server, "POST", `/api/bridge/runs/${invoked.body.runId}/cancel`)).status).toBe(409);
  });

  it("refuses a command that is not on the host", async () => {
    const missing = await register({ kind: "process", command: "no-such-tool-xyz" });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toContain("no-such-tool-xyz was not found");
    expect((await register({ kind: "teleport" })).status).toBe(400);
    expect((await register({ kind: "process" })).body.error).toContain("command");
  });
});

describe("coding CLIs", () => {
  it.each([
    ["claude_code", "claude did: fix it", { sessionId: "s1", costUsd: 0.01 }],
    ["codex", "codex did: fix it", { usage: { input_tokens: 5, cached_input_tokens: 0, output_tokens: 6 } }],
    ["cursor", "cursor did: fix it", { sessionId: "c1" }],
    ["opencode", "opencode did: fix it", { usage: { input: 7, output: 8 } }],
  ])("runs %s non-interactively and reads its answer", async (kind, text, extra) => {
    const runtime = await register({ kind });
    expect(runtime.status, JSON.stringify(runtime.body)).toBe(201);
    const run = await runToEnd(runtime.body.id, { prompt: "fix it" });
    expect(run).toMatchObject({ status: "completed", output: { text, ...extra } });
    const noPrompt = await call(server, "POST", "/api/bridge/invoke", { runtimeId: runtime.body.id });
    expect(noPrompt.status).toBe(400);
  });
});

describe("the prompt a coding CLI gets", () => {
  /** Records the argv it got (NUL-separated) and its stdin, then prints a result line. */
  const RECORDER = `printf '%s\\0' "$@" > "$ARGV_OUT"; cat > "$ARGV_OUT.stdin"; echo '{"type":"result","result":"ok"}'`;

  it.each([
    // Each prompt is a subcommand of that tool: as an argument where its parser looks for one, it ran.
    ["claude_code", "update", ["-p", "--output-format", "json"], "update\n\n{"],
    ["codex", "review", ["exec", "--json", "--", "review"], '{"context"'],
    ["cursor", "login", ["-p", "--output-format", "json", "--", "login\n"], '{"context"'],
    ["opencode", "mcp", ["run", "--format", "json", "--", "mcp"], '{"context"'],
  ])("gives %s the prompt %j where it is read as the prompt", async (kind, prompt, argv, stdinStart) => {
    const recorder = join(tools, "recorder");
    writeFileSync(recorder, `#!/bin/sh\n${RECORDER}\n`);
    chmodSync(recorder, 0o755);
    const out = join(tools, `argv-${kind}`);
    const runtime = await register({ kind, command: recorder, env: { ARGV_OUT: out } });
    expect(runtime.status, JSON.stringify(runtime.body)).toBe(201);
    const run = await runToEnd(runtime.body.id, { prompt });
    expect(run.status, JSON.stringify(run)).not.toBe("running");
    expect(readFileSync(out, "utf8").split("\0").slice(0, -1)).toEqual(argv);
    expect(readFileSync(`${out}.stdin`, "utf8").startsWith(stdinStart)).toBe(true);
  });
});

describe("what a caller passes a runtime", () => {
  it("refuses a prompt a CLI would read as an option, and a context the kernel could not pass, leaving no run", async () => {
    const runtime = await register({ kind: "claude_code" });
    const before = (await call(server, "GET", "/api/bridge/runs")).body.runs.length;
    const option = await call(server, "POST", "/api/bridge/invoke", {
      runtimeId: runtime.body.id,
      prompt: '--mcp-config={"mcpServers":{"x":{"command":"sh"}}}',
    });
    expect(option.status).toBe(400);
    expect(option.body.error).toContain('must not begin with "-"');
    for (const fields of [
      { prompt: "x".repeat(150_000) },
      { prompt: "fix it", context: "y".repeat(130_000) },
    ]) {
      const big = await call(server, "POST", "/api/bridge/invoke", { runtimeId: runtime.body.id, ...fields });
      expect(big.status).toBe(400);
      expect(big.body.error).toContain("at most 120000 bytes");
    }
    expect((await call(server, "GET", "/api/bridge/runs")).body.runs.length).toBe(before);
  });
});

describe("http runtimes", () => {
  it("POSTs the context to the URL and keeps the JSON answer", async () => {
    const runtime = await register({ kind: "http", url: hookUrl });
    const run = await runToEnd(runtime.body.id, { context: { a: 1 }, prompt: "p" });
    expect(run).toMatchObject({
      status: "completed",
      output: { received: { context: { a: 1 }, prompt: "p" } },
    });
    expect((await register({ kind: "http", url: "file:///etc/passwd" })).status).toBe(400);
  });

  it("refuses a private address unless the service allows private networks", async () => {
    const strict = await startTestServer();
    try {
      const refused = await call(strict, "POST", "/api/bridge/runtimes", {
        kind: "http",
        name: "inner",
        url: "http://10.0.0.5/hook",
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toContain("SSRF protection");
    } finally {
      await strict.close();
    }
  });
});

describe("who may use the bridge", () => {
  it("lets only admins register, cancel and read runtimes' secrets, and realm keys invoke only runtimes opened to their realm", async () => {
    const realmId = await newRealm(server, "bridge");
    const key = await realmKey(server, realmId);
    expect((await register({ kind: "process", command: "true" }, key)).status).toBe(403);
    const closed = await sh("echo '{}'");
    expect(
      (await call(server, "POST", "/api/bridge/invoke", { runtimeId: closed.body.id }, key)).status,
    ).toBe(404);
    const open = await sh("echo '{\"ok\":true}'", { realms: [realmId], env: { TOKEN: "s3cret" } });
    const run = await runToEnd(open.body.id, {}, key);
    expect(run).toMatchObject({ status: "completed", realmId, output: { ok: true } });
    const listed = await call(server, "GET", "/api/bridge/runtimes", undefined, key);
    expect(listed.body.runtimes.map((r: { id: string }) => r.id)).toEqual([open.body.id]);
    // The runtime's environment may hold its credentials: a realm key sees the names, not the values.
    expect(listed.body.runtimes[0].env).toEqual({ TOKEN: "[redacted]" });
    const asAdmin = await call(server, "GET", "/api/bridge/runtimes");
    expect(asAdmin.body.runtimes.find((r: { id: string }) => r.id === open.body.id).env).toEqual({
      TOKEN: "s3cret",
    });
    const otherKey = await realmKey(server, await newRealm(server, "other"));
    expect((await call(server, "GET", `/api/bridge/runs/${run.id}`, undefined, otherKey)).status).toBe(404);
    // Listed runs follow the same rule: a realm key sees its realm's runs, an admin every run.
    const ids = async (query: string, as?: string) =>
      (await call(server, "GET", `/api/bridge/runs${query}`, undefined, as)).body.runs.map(
        (listed: { id: string }) => listed.id,
      );
    expect(await ids("", key)).toEqual([run.id]);
    expect(await ids("", otherKey)).toEqual([]);
    expect(await ids(`?runtimeId=${open.body.id}`)).toEqual([run.id]);
    expect(await ids("?limit=1")).toHaveLength(1);
  });
});

describe("agents handing work to a runtime", () => {
  it("calls bridge::invoke as a tool when granted, on a runtime opened to its realm", async () => {
    const realmId = await newRealm(server, "delegating");
    const runtime = await sh("echo '{\"done\":true}'", { realms: [realmId] });
    const agentId = await createAgent(server, realmId, { name: "delegator", tools: ["bridge::invoke"] });
    fake.reply(
      { toolCalls: [{ name: "bridge__invoke", arguments: { runtimeId: runtime.body.id, prompt: "go" } }] },
      { content: "handed over" },
    );
    const reply = await call(server, "POST", `/api/agents/${agentId}/message`, { message: "delegate" });
    expect(reply.body.content).toBe("handed over");
    const toolResult = JSON.stringify(fake.requests.at(-1));
    const runId = /brun-[0-9a-f-]{36}/.exec(toolResult)?.[0];
    expect(runId).toBeDefined();
    const run = await eventually(async () => {
      const { body } = await call(server, "GET", `/api/bridge/runs/${runId}`);
      return body.status === "completed" ? body : undefined;
    });
    expect(run).toMatchObject({ realmId, output: { done: true } });
  });
});
