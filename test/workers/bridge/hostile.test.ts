import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { call, newRealm, realmKey } from "../../helpers/control-plane.ts";
import { eventually } from "../../helpers/iii.ts";
import { processesWithEnv } from "../../helpers/procs.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

/** What a runtime prints is its own: these print what a hostile or broken one could. */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ bridgeRunsPerRealm: 2 });
});
afterAll(async () => {
  await server.close();
});

const sh = (script: string, extra: Record<string, unknown> = {}) =>
  call(server, "POST", "/api/bridge/runtimes", {
    kind: "process",
    name: "hostile",
    command: "sh",
    args: ["-c", script],
    ...extra,
  });

async function runToEnd(script: string, extra: Record<string, unknown> = {}, prompt?: string) {
  const runtime = await sh(script, extra);
  expect(runtime.status, JSON.stringify(runtime.body)).toBe(201);
  const invoked = await call(server, "POST", "/api/bridge/invoke", { runtimeId: runtime.body.id, prompt });
  expect(invoked.status, JSON.stringify(invoked.body)).toBe(202);
  return eventually(async () => {
    const { status, body } = await call(server, "GET", `/api/bridge/runs/${invoked.body.runId}`);
    expect(status).toBe(200);
    return body.status === "running" ? undefined : body;
  }, 20_000);
}

/** awk printing `head`, `body` `times` times, then `tail`: megabytes from a line of script. */
const repeat = (head: string, body: string, times: number, tail: string) =>
  `awk 'BEGIN{printf "${head}";for(i=0;i<${times};i++)printf "${body}";printf "${tail}"}'`;

describe("output a runtime prints", () => {
  it("keeps JSON nested too deep to store as its text, and the service keeps serving", async () => {
    // Parsed, 200 000 nested arrays overflowed the stack when the run was stored: the service died.
    const run = await runToEnd(`${repeat("", "[", 200_000, "")}; ${repeat("", "]", 200_000, "")}`);
    expect(run).toMatchObject({ status: "completed", truncated: false });
    expect(typeof run.output).toBe("string");
    expect(run.output.startsWith("[[[")).toBe(true);
    const deepLine = await runToEnd(
      `echo '{"type":"result","result":"ok"}'; ${repeat('{\\"usage\\":', "[", 100_000, "1")}; echo`,
      { kind: "claude_code", command: "sh" },
      "go",
    );
    expect(deepLine.status).not.toBe("running");
  });

  it("cuts output whose stored form outgrows the store, marking it truncated", async () => {
    // A megabyte of control characters serializes to six (each becomes \u0001), 1e20 to 21 digits:
    // the store refused the run, which stayed running, and the rejection ended the service.
    const control = await runToEnd(repeat("", "\\001", 1024 * 1024, ""));
    expect(control).toMatchObject({ status: "completed", truncated: true });
    expect(control.output.length).toBeGreaterThan(0);
    expect(control.output.replaceAll("\u0001", "")).toBe("");
    const numbers = await runToEnd(repeat("[", "1e20,", 200_000, "1]"));
    expect(numbers).toMatchObject({ status: "completed", truncated: true });
    expect(typeof numbers.output).toBe("string");
  });
});

/**
 * A script that starts `sleep 60` in a session of its own (out of the run's process group), with
 * `prefix` before it, and prints `{}` once the sleeper is detached; the sleeper's pid is in `pidFile`.
 */
const detached = (pidFile: string, prefix = "") =>
  `${prefix} setsid sh -c 'echo $$ > ${pidFile}; exec sleep 60' & ` +
  `while [ ! -s ${pidFile} ]; do sleep 0.01; done; echo '{}'`;

function alive(pidFile: string): boolean {
  try {
    process.kill(Number(readFileSync(pidFile, "utf8")), 0);
    return !/\) Z/.test(readFileSync(`/proc/${readFileSync(pidFile, "utf8").trim()}/stat`, "utf8"));
  } catch {
    return false;
  }
}

function reap(pidFile: string): void {
  try {
    process.kill(Number(readFileSync(pidFile, "utf8")), "SIGKILL");
  } catch {
    // Not started, or gone.
  }
  rmSync(pidFile, { force: true });
}

describe("processes a runtime leaves behind", () => {
  const pidFile = join(tmpdir(), `agentos-bridge-orphan-${process.pid}`);
  afterEach(() => reap(pidFile));

  it("ends a run whose process left a child in a session of its own, and kills that child", async () => {
    // The child left the process group and kept standard output open: the run never ended.
    const run = await runToEnd(detached(pidFile));
    expect(run).toMatchObject({ status: "completed", output: {} });
    expect(alive(pidFile)).toBe(false);
    expect(processesWithEnv("AGENTOS_BRIDGE_RUN", run.id)).toEqual([]);
  });

  it("ends a timed-out run even when a process that shed its marker holds its output open", async () => {
    const run = await runToEnd(detached(pidFile, "env -u AGENTOS_BRIDGE_RUN"), { timeoutSecs: 1 });
    expect(run.status).toBe("timed_out");
  });
});

describe("runs a realm starts", () => {
  it("holds a realm's keys to their share of runs at once, with a 429 naming it", async () => {
    const realmId = await newRealm(server, "busy");
    const key = await realmKey(server, realmId);
    const sleeper = await sh("sleep 30", { realms: [realmId] });
    const invoke = (as?: string) =>
      call(server, "POST", "/api/bridge/invoke", { runtimeId: sleeper.body.id }, as);
    const held = [await invoke(key), await invoke(key)];
    expect(held.map((answer) => answer.status)).toEqual([202, 202]);
    // Each invoke answered at once: a realm key started processes without bound.
    const refused = await invoke(key);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toContain("AGENTOS_BRIDGE_RUNS_PER_REALM");
    const admin = await invoke();
    expect(admin.status).toBe(202);
    await call(server, "POST", `/api/bridge/runs/${held[0]?.body.runId}/cancel`);
    expect((await invoke(key)).status).toBe(202);
    const runs = (await call(server, "GET", "/api/bridge/runs?limit=100")).body.runs;
    for (const run of runs.filter((listed: { status: string }) => listed.status === "running")) {
      await call(server, "POST", `/api/bridge/runs/${run.id}/cancel`);
    }
  });
});

describe("what the kernel could not pass", () => {
  it("refuses NUL characters and a missing workDir at register, and a NUL prompt at invoke, as 400s", async () => {
    // Each was accepted, and every invoke then failed to start the process (a 422 and a failed run).
    for (const [fields, problem] of [
      [{ args: ["a\u0000b"] }, "args must not contain NUL"],
      [{ env: { X: "a\u0000b" } }, "env values must not contain NUL"],
      [{ workDir: "/no/such/dir" }, "workDir: /no/such/dir is not a directory"],
    ] as const) {
      const refused = await sh("true", fields);
      expect(refused.status, JSON.stringify(fields)).toBe(400);
      expect(refused.body.error).toContain(problem);
    }
    const tool = await sh("true", { kind: "claude_code" });
    const before = (await call(server, "GET", "/api/bridge/runs?limit=100")).body.runs.length;
    const nul = await call(server, "POST", "/api/bridge/invoke", {
      runtimeId: tool.body.id,
      prompt: "a\u0000b",
    });
    expect(nul.status).toBe(400);
    expect(nul.body.error).toContain("prompt must not contain NUL");
    expect((await call(server, "GET", "/api/bridge/runs?limit=100")).body.runs.length).toBe(before);
  });
});

describe("a context from an agent's tool call", () => {
  it("refuses one nested too deep as a 400, not a stack overflow", async () => {
    // A model's tool arguments are parsed without the HTTP body's depth limit.
    const runtime = await sh("true");
    const context = JSON.parse(`${"[".repeat(100_000)}${"]".repeat(100_000)}`);
    const invoked = server.service.engine.trigger({
      function_id: "bridge::invoke",
      payload: { runtimeId: runtime.body.id, context },
    });
    await expect(invoked).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining("context must nest at most 64 levels"),
    });
  });
});
