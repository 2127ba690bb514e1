import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { createAgentOS } from "../src/app.ts";
import { loadConfig } from "../src/config/env.ts";
import { systemResolver } from "../src/shared/net/guarded-request.ts";
import { type ConfinedRun, Sandbox } from "../src/shared/process/sandbox/index.ts";
import { type Supervised, supervise } from "../src/shared/process/supervise.ts";
import { DEFAULT_BROWSER_PATH } from "../src/workers/tools/browser/chromium.ts";
import { startFakeOpenAI } from "../test/helpers/fake-openai.ts";
import { median, percentile, tempDir } from "./util.ts";

const TURNS = 200;
const SCREENSHOTS = 200;
/** What one tool call may add to an agent's turn beyond the tool's own work (p50). */
const TOOL_OVERHEAD_TARGET_MS = 5;
const SANDBOX_RUNS = 200;
const SANDBOX_WARMUP = 20;
/** What the sandbox may add to starting one program, start to done (p50). */
const SANDBOX_OVERHEAD_TARGET_MS = 10;

const p = (values: number[], q: number) =>
  percentile(
    [...values].sort((a, b) => a - b),
    q,
  ).toFixed(2);

/**
 * `npm run bench tools` (issue #16): one tool call (tool::file_read) through an agent's turn against the
 * same turn without it and a direct engine.trigger of the tool; browser screenshots cold and warm, and
 * the memory of the service and Chromium after 200 of them; what the sandbox (issue #32) adds to
 * starting one program.
 */
export async function benchTools(): Promise<void> {
  // First, in a small process: a spawn's own cost grows with the spawning process's memory (fork), and
  // the browser section leaves this one large, which would blur what the sandbox itself adds.
  await sandboxCost();
  const fake = await startFakeOpenAI();
  const dir = tempDir();
  const apiKey = "bench-admin-key-0123456789";
  const service = await createAgentOS({
    ...loadConfig({
      AGENTOS_DATA_DIR: dir.path,
      AGENTOS_API_KEY: apiKey,
      AGENTOS_LOG_LEVEL: "warn",
      OPENAI_API_KEY: "sk-bench",
      OPENAI_BASE_URL: fake.baseUrl,
      AGENTOS_ALLOW_PRIVATE_NETWORK: "1",
    }),
    port: 0,
    host: "127.0.0.1",
    enginePort: 0,
    rateLimits: false as const,
  });
  const url = await service.listen();
  const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
  try {
    const created = await fetch(`${url}/api/agents`, {
      method: "POST",
      headers,
      body: JSON.stringify({ name: "bench-tools", model: "gpt-4o", toolProfile: "code" }),
    });
    const agentId = ((await created.json()) as { id: string }).id;
    const auth = { kind: "realm" as const, realmId: "realm-default", keyId: `agent:${agentId}` };
    await service.engine.trigger({
      function_id: "tool::file_write",
      payload: { agentId, path: "x.txt", content: "hello" },
      auth,
    });

    const direct: number[] = [];
    for (let i = 0; i < TURNS; i++) {
      const started = performance.now();
      await service.engine.trigger({
        function_id: "tool::file_read",
        payload: { agentId, path: "x.txt" },
        auth,
      });
      direct.push(performance.now() - started);
    }
    const turn = async (withTool: boolean) => {
      const samples: number[] = [];
      for (let i = 0; i < TURNS; i++) {
        if (withTool)
          fake.reply(
            { toolCalls: [{ name: "tool__file_read", arguments: { path: "x.txt" } }] },
            { content: "read it" },
          );
        else fake.reply({ content: "no tool" });
        const started = performance.now();
        const response = await fetch(`${url}/api/agents/${agentId}/message`, {
          method: "POST",
          headers,
          body: JSON.stringify({ message: "read x" }),
        });
        await response.text();
        samples.push(performance.now() - started);
      }
      return samples;
    };
    const without = await turn(false);
    const withTool = await turn(true);
    // A turn with a tool call also makes a second model call: measured on its own, straight to the fake.
    const modelCall: number[] = [];
    for (let i = 0; i < TURNS; i++) {
      const started = performance.now();
      const response = await fetch(`${fake.baseUrl}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "x" }] }),
      });
      await response.text();
      modelCall.push(performance.now() - started);
    }
    const overhead = median(withTool) - median(without) - median(modelCall);
    console.log("\ntools: one tool call (tool::file_read) through an agent turn");
    console.log(`  direct engine.trigger       p50 ${p(direct, 50)} ms, p99 ${p(direct, 99)} ms`);
    console.log(`  turn without a tool call    p50 ${p(without, 50)} ms, p99 ${p(without, 99)} ms`);
    console.log(`  turn with one tool call     p50 ${p(withTool, 50)} ms, p99 ${p(withTool, 99)} ms`);
    console.log(`  one more fake model call    p50 ${p(modelCall, 50)} ms`);
    console.log(
      `  a tool call adds ${overhead.toFixed(2)} ms to a turn beyond the extra model call (${(overhead / median(direct)).toFixed(1)}x the direct call; target <= ${TOOL_OVERHEAD_TARGET_MS} ms: ${overhead <= TOOL_OVERHEAD_TARGET_MS ? "met" : "MISSED"})`,
    );
    await screenshots(service);
  } finally {
    await service.close();
    await fake.close();
    dir.remove();
  }
}

/**
 * Wall time from start to done of one short program, unconfined (`supervise`, as before the sandbox)
 * and through `sandbox.start` (prlimit + bwrap + seccomp, quota check included), alternating one of
 * each so drift on a noisy machine affects both alike.
 */
async function sandboxCost(): Promise<void> {
  const dir = tempDir();
  const sandbox = new Sandbox({
    env: process.env,
    dataDir: dir.path,
    policy: { allowPrivateNetwork: false, allowedAddresses: new Set<string>(), resolve: systemResolver },
  });
  try {
    const status = await sandbox.ready();
    if (status.mode !== "on") {
      const why = status.mode === "off" ? "AGENTOS_SANDBOX=off" : status.reason;
      console.log(`\nsandbox: skipped, the sandbox is ${status.mode} (${why})`);
      return;
    }
    const workspace = join(dir.path, "workspaces", "bench");
    mkdirSync(workspace, { recursive: true });
    const real = realpathSync(workspace);
    const limits = { timeoutMs: 30_000, killGraceMs: 0 };
    const unconfined = (executable: string, args: string[]) => () =>
      supervise({ command: executable, args, env: {}, inherit: [], ...limits });
    const confined = (executable: string, args: string[], egress?: ConfinedRun["egress"]) => () =>
      sandbox.start({ workspace: real, executable, args, egress }, limits);

    console.log(
      `\nsandbox: cost per command, start to done (${SANDBOX_RUNS} runs each after ${SANDBOX_WARMUP} warm-up)`,
    );
    const trueBase = unconfined("/bin/true", []);
    const [bare, boxed] = await timeRuns(trueBase, confined("/bin/true", []));
    const added = median(boxed) - median(bare);
    console.log(`  /bin/true unconfined         ${pcts(bare)}`);
    console.log(`  /bin/true confined           ${pcts(boxed)}`);
    console.log(
      `  the sandbox adds ${added.toFixed(2)} ms p50 (x${(median(boxed) / median(bare)).toFixed(1)}; target <= ${SANDBOX_OVERHEAD_TARGET_MS} ms p50 added: ${added <= SANDBOX_OVERHEAD_TARGET_MS ? "met" : "not met"})`,
    );
    if (status.limits === "run") await runGroupCost(dir.path, real, trueBase, limits);
    const python = "/usr/bin/python3";
    if (existsSync(python)) {
      const args = ["-c", "pass"];
      const [pyBare, pyBoxed] = await timeRuns(unconfined(python, args), confined(python, args));
      console.log(`  python3 -c pass unconfined   ${pcts(pyBare)}`);
      console.log(`  python3 -c pass confined     ${pcts(pyBoxed)}`);
      console.log(`  the sandbox adds ${(median(pyBoxed) - median(pyBare)).toFixed(2)} ms p50 (informative)`);
    } else console.log(`  python3: skipped, no ${python}`);
    const egress = { key: "bench", allowDomains: null };
    const [egBare, egBoxed] = await timeRuns(trueBase, confined("/bin/true", [], egress));
    console.log(`  /bin/true confined + egress  ${pcts(egBoxed)} (Node relay inside)`);
    console.log(
      `  the sandbox with egress adds ${(median(egBoxed) - median(egBare)).toFixed(2)} ms p50 (informative)`,
    );
  } finally {
    await sandbox.close();
    dir.remove();
  }
}

/**
 * What the run's control group adds to the sandbox: the same runs in a sandbox without them
 * (AGENTOS_SANDBOX_RUN_GROUPS=off). Joining a group is a cgroup migration, which waits for an RCU grace
 * period of the kernel's (a few ms to tens of ms, by the machine's load and tick).
 */
async function runGroupCost(
  dataDir: string,
  workspace: string,
  baseline: () => Supervised,
  limits: { timeoutMs: number; killGraceMs: number },
): Promise<void> {
  const perProcess = new Sandbox({
    env: { ...process.env, AGENTOS_SANDBOX_RUN_GROUPS: "off" },
    dataDir,
    policy: { allowPrivateNetwork: false, allowedAddresses: new Set<string>(), resolve: systemResolver },
  });
  try {
    await perProcess.ready();
    const [bare, boxed] = await timeRuns(baseline, () =>
      perProcess.start({ workspace, executable: "/bin/true", args: [] }, limits),
    );
    console.log(
      `  /bin/true confined, limits per process only (AGENTOS_SANDBOX_RUN_GROUPS=off) ${pcts(boxed)}`,
    );
    console.log(
      `  without the run's control group the sandbox adds ${(median(boxed) - median(bare)).toFixed(2)} ms p50 (informative)`,
    );
  } finally {
    await perProcess.close();
  }
}

const pcts = (values: number[]) => `p50 ${p(values, 50)} ms, p95 ${p(values, 95)} ms`;

/** Start-to-done times of `baseline` and `subject`, one of each in turn, after a warm-up of each. */
async function timeRuns(
  baseline: () => Supervised | Promise<Supervised>,
  subject: () => Supervised | Promise<Supervised>,
): Promise<[number[], number[]]> {
  const once = async (start: () => Supervised | Promise<Supervised>) => {
    const started = performance.now();
    const finished = await (await start()).done;
    const elapsed = performance.now() - started;
    if (finished.reason !== "exited" || finished.exitCode !== 0) {
      throw new Error(
        `sandbox bench: a run failed (${finished.reason}, exit ${finished.exitCode}): ${finished.spawnError ?? finished.stderr.trim()}`,
      );
    }
    return elapsed;
  };
  for (let i = 0; i < SANDBOX_WARMUP; i++) {
    await once(baseline);
    await once(subject);
  }
  const base: number[] = [];
  const sub: number[] = [];
  for (let i = 0; i < SANDBOX_RUNS; i++) {
    base.push(await once(baseline));
    sub.push(await once(subject));
  }
  return [base, sub];
}

async function screenshots(service: Awaited<ReturnType<typeof createAgentOS>>): Promise<void> {
  const chromium = process.env.AGENTOS_BROWSER_PATH || DEFAULT_BROWSER_PATH;
  if (!existsSync(chromium)) {
    console.log(`\nbrowser: skipped, no Chromium at ${chromium} (npm install as root installs it)`);
    return;
  }
  const page = createServer((_req, res) =>
    res
      .writeHead(200, { "content-type": "text/html" })
      .end(`<title>bench</title><h1>${"text ".repeat(200)}</h1>`),
  );
  await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
  const target = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
  const shoot = async () => {
    const started = performance.now();
    await service.engine.trigger({
      function_id: "tool::browser_screenshot",
      payload: { url: target, viewport: { width: 800, height: 600 } },
    });
    return performance.now() - started;
  };
  try {
    const cold = await shoot();
    const warm: number[] = [];
    let rssAt20 = 0;
    for (let i = 1; i < SCREENSHOTS; i++) {
      warm.push(await shoot());
      if (i === 20) rssAt20 = totalRss();
    }
    const rssAt200 = totalRss();
    const growth = rssAt200 / rssAt20;
    console.log("\nbrowser: tool::browser_screenshot of a local page, 800x600");
    console.log(`  cold (Chromium starts)      ${cold.toFixed(0)} ms`);
    console.log(`  warm                        p50 ${p(warm, 50)} ms, p99 ${p(warm, 99)} ms`);
    console.log(
      `  RSS, service + Chromium     ${mb(rssAt20)} after 20, ${mb(rssAt200)} after ${SCREENSHOTS} (x${growth.toFixed(2)}; target: bounded, <= x1.25: ${growth <= 1.25 ? "met" : "MISSED"})`,
    );
  } finally {
    page.close();
  }
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

/** This process's RSS plus every Chromium process's (Linux /proc). */
function totalRss(): number {
  let total = process.memoryUsage().rss;
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("chromium")) continue;
      const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
      total += Number(kb ?? 0) * 1024;
    } catch {
      // Gone meanwhile.
    }
  }
  return total;
}
