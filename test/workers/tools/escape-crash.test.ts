import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeOpenAI, startFakeOpenAI } from "../../helpers/fake-openai.ts";
import { makeDataDir, removeDir, type ServeProcess, startServe } from "../../helpers/process.ts";
import { processesCarrying } from "../../helpers/procs.ts";

const ADMIN_KEY = "escape-crash-admin-key-0123456789";

async function until(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return check();
}

let fake: FakeOpenAI;
let dataDir: string;
let server: ServeProcess | undefined;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  dataDir = makeDataDir();
  server = await startServe({
    dataDir,
    env: { AGENTOS_API_KEY: ADMIN_KEY, OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fake.baseUrl },
  });
});

afterAll(async () => {
  await server?.stop("SIGKILL").catch(() => undefined);
  await fake.close();
  removeDir(dataDir);
});

describe("the sandbox when the service dies", () => {
  it("leaves no process of an agent's program behind after kill -9 of the service", async () => {
    const service = server as ServeProcess;
    const created = await service.request("/api/agents", {
      method: "POST",
      key: ADMIN_KEY,
      json: { name: "doomed", model: "gpt-4o", toolProfile: "full" },
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const marker = `agentos-orphan-${id}`;
    // A program that starts a child in a session of its own and both sleep: all must die with the service.
    const program = `import os, subprocess, time\nsubprocess.Popen(["sleep", "300"], start_new_session=True)\nif os.fork() == 0:\n    os.setsid(); time.sleep(300)\ntime.sleep(300)  # ${marker}`;
    fake.reply({
      toolCalls: [
        {
          name: "tool__shell_exec",
          arguments: { command: "python3", args: ["-c", program], timeoutMs: 300_000 },
        },
      ],
    });
    void service
      .request(`/api/agents/${id}/message`, { method: "POST", key: ADMIN_KEY, json: { message: "go" } })
      .catch(() => undefined);
    // The program, its fork and the sleep run as the workspace's uid (bubblewrap's own processes as root).
    const programUid = () =>
      processesCarrying(marker)
        .map(uidOf)
        .find((uid) => uid !== undefined && uid !== "0");
    const ofProgram = () =>
      readdirSync("/proc").filter((pid) => /^\d+$/.test(pid) && uidOf(pid) === programUid());
    expect(await until(() => programUid() !== undefined && ofProgram().length >= 3, 15_000)).toBe(true);
    const sandboxed = ofProgram();
    await service.stop("SIGKILL");
    server = undefined;
    const gone = await until(
      () => processesCarrying(marker).length === 0 && sandboxed.every((pid) => !alive(pid)),
      5_000,
    );
    expect(gone, `left: ${processesCarrying(marker).join(", ")}`).toBe(true);
  });
});

function uidOf(pid: number | string): string | undefined {
  try {
    return /Uid:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  } catch {
    return undefined;
  }
}

/** Running (a zombie waiting to be reaped by init is dead). */
function alive(pid: string): boolean {
  try {
    return !/State:\s+Z/.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}
