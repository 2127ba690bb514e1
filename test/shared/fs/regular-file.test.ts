import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeDataDir, removeDir, runCli } from "../../helpers/process.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) removeDir(dir);
});

describe("declarative files that are not regular files", () => {
  it("a FIFO named like a channel, integration or workflow file is a problem naming it, not a read that never ends", async () => {
    const home = makeDataDir();
    dirs.push(home);
    mkdirSync(join(home, "config", "channels"), { recursive: true });
    mkdirSync(join(home, "integrations"), { recursive: true });
    mkdirSync(join(home, "workflows"), { recursive: true });
    // A read of a FIFO nobody writes blocks the whole process: a start, or a reload on a live service.
    const channel = join(home, "config", "channels", "slack.toml");
    const integration = join(home, "integrations", "github.toml");
    const workflow = join(home, "workflows", "nightly.yaml");
    execFileSync("mkfifo", [channel, integration, workflow]);

    const result = await runCli(["config", "validate", home], {});

    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${channel}: not a regular file`);
    expect(result.stderr).toContain(`${integration}: not a regular file`);
    expect(result.stderr).toContain(`${workflow}: not a regular file`);
  });
});
