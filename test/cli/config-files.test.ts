import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freePort, makeDataDir, removeDir, runCli } from "../helpers/process.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) removeDir(dir);
});

function home(files: Record<string, string>): string {
  const dir = makeDataDir();
  dirs.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe("agentos config validate", () => {
  it("exits non-zero naming a bad workflows/ file and its problem, and lists the good workflows", async () => {
    const dir = home({
      "agents/helper/agent.toml": `model = "gpt-4o"\n`,
      "workflows/good.yaml":
        "name: Good\nsteps:\n  - name: a\n    functionId: agent::chat\n    agent: helper\n",
      "workflows/bad.yaml":
        "name: Bad\nsteps:\n  - name: a\n    functionId: agent::chat\n    promptTemplate: 'About {{topic}}'\n",
    });
    const result = await runCli(["config", "validate", dir], {});
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).workflows).toEqual([`good (${join(dir, "workflows", "good.yaml")})`]);
    expect(result.stderr).toContain(join(dir, "workflows", "bad.yaml"));
    expect(result.stderr).toContain('step "a" names {{topic}}');
  });
});

describe("agentos config reload", () => {
  it("exits non-zero when it skipped a file, saying which and why", async () => {
    const dataDir = makeDataDir();
    dirs.push(dataDir);
    const dir = home({
      "agents/helper/agent.toml": `model = "gpt-4o"\n`,
      "config/channels/orphan.toml": `platform = "telegram"\nchannel_id = "2"\nagent = "nobody"\n`,
    });
    const result = await runCli(
      ["config", "reload"],
      {
        AGENTOS_DATA_DIR: dataDir,
        AGENTOS_HOME: dir,
        AGENTOS_PORT: String(await freePort()),
        OPENAI_API_KEY: "sk-test",
      },
      60_000,
    );
    expect(result.code, result.stderr).toBe(1);
    expect(JSON.parse(result.stdout).agents.created).toEqual(["helper"]);
    expect(result.stderr).toContain(join(dir, "config", "channels", "orphan.toml"));
    expect(result.stderr).toContain("no agent nobody is declared in agents/");
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });
});
