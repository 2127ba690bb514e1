import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { NODE } from "../../../helpers/process.ts";

const src = (path: string) => fileURLToPath(new URL(`../../../../src/${path}`, import.meta.url));

/*
 * A service started by a launcher that left a descriptor open without close-on-exec (a supervisor's
 * notification pipe, socket activation, `agentos serve 9</etc/agentos/secrets`): the service process
 * below holds it at INHERITED, as such a service would, and runs a tenant's program with shell_exec's
 * own function. The program looks through every descriptor it has for what the launcher's file holds.
 */
const INHERITED = 40;
const SECRET = "launcher-secret-5d1e";

const SERVICE = `
import { mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { Sandbox } from ${JSON.stringify(src("shared/process/sandbox/index.ts"))};
import { DEFAULT_ALLOWLIST, runCommand } from ${JSON.stringify(src("workers/tools/command.ts"))};
const dataDir = process.argv[1];
const root = join(dataDir, "workspaces", "tenant");
mkdirSync(root, { recursive: true });
const sandbox = new Sandbox({ env: {}, dataDir, policy: { allowPrivateNetwork: false, resolve: async () => [] } });
const ran = await runCommand(sandbox, realpathSync(root), DEFAULT_ALLOWLIST, {
  command: "python3",
  args: ["-c", process.argv[2]],
});
await sandbox.close();
process.stdout.write(JSON.stringify(ran));
`;

const PROGRAM = `
import os, json
found = {}
for name in os.listdir("/proc/self/fd"):
    fd = int(name)
    if fd < 3: continue
    try: found[name] = os.pread(fd, 200, 0).decode(errors="replace")
    except OSError as e: found[name] = "error: " + e.strerror
print(json.dumps(found))
`;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function runService(inherited: number): Promise<{ stdout: string; stderr: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), "agentos-fds-"));
  dirs.push(dataDir);
  const stdio: Array<"ignore" | "pipe" | number> = ["ignore", "pipe", "pipe"];
  while (stdio.length < INHERITED) stdio.push("ignore");
  stdio.push(inherited);
  const child = spawn(NODE, ["--input-type=module", "-e", SERVICE, dataDir, PROGRAM], { stdio });
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.on("close", () => resolve({ stdout, stderr })));
}

describe("descriptors the service inherited", () => {
  it.skipIf(process.platform !== "linux")(
    "never reach a sandboxed program (one left open by the service's launcher is not readable inside)",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "agentos-launcher-"));
      dirs.push(dir);
      writeFileSync(join(dir, "secrets.env"), `AGENTOS_API_KEY=${SECRET}\n`, { mode: 0o600 });
      const fd = openSync(join(dir, "secrets.env"), "r");
      let service: { stdout: string; stderr: string };
      try {
        service = await runService(fd);
      } finally {
        closeSync(fd);
      }
      const ran = JSON.parse(service.stdout || "{}") as { exitCode?: number; stdout?: string };
      expect(ran.exitCode, JSON.stringify(service)).toBe(0);
      const found = JSON.parse(ran.stdout ?? "{}") as Record<string, string>;
      expect(JSON.stringify(found)).not.toContain(SECRET);
      expect(found[String(INHERITED)] ?? "").toBe("");
    },
  );
});
