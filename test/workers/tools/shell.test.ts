import { existsSync, readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { toolsServer } from "./setup.ts";

const env = toolsServer();

/** Processes whose command line mentions `needle` (Linux /proc). */
function running(needle: string): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(needle);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe("tool::shell_exec", () => {
  it("runs an allowlisted program in the workspace without a shell", async () => {
    await env.agent();
    await env.tool("tool::file_write", { path: "notes.txt", content: "b\na\n" });
    const sorted = await env.tool("tool::shell_exec", { command: "sort", args: ["notes.txt"] });
    expect(sorted).toMatchObject({ exitCode: 0, stdout: "a\nb\n", timedOut: false, truncated: false });
    // Shell syntax is just an argument: nothing is interpreted.
    const echoed = await env.tool("tool::shell_exec", {
      command: "echo",
      args: ["$(id); rm -rf *", "|", "cat"],
    });
    expect(echoed).toMatchObject({ stdout: "$(id); rm -rf * | cat\n" });
    expect(existsSync(`${env.server.dataDir}`)).toBe(true);
    const pwd = await env.tool<{ stdout: string }>("tool::shell_exec", { command: "pwd" });
    expect(pwd.stdout.trim()).toBe("/workspace");
  });

  it("refuses programs off the allowlist, paths and shell syntax in the command", async () => {
    await env.agent();
    expect(
      (await env.failure("tool::shell_exec", { command: "bash", args: ["-c", "id"] })).message,
    ).toContain("not on the allowlist");
    expect((await env.failure("tool::shell_exec", { command: "/bin/ls" })).message).toContain(
      "bare program name",
    );
    expect((await env.failure("tool::shell_exec", { command: "ls;id" })).message).toContain(
      "bare program name",
    );
    expect(
      (await env.failure("tool::shell_exec", { command: "cat", args: ["/etc/passwd"] })).message,
    ).toContain("outside your workspace");
    expect(
      (await env.failure("tool::shell_exec", { command: "cat", args: ["../../../etc/passwd"] })).message,
    ).toContain('".."');
    expect(
      (await env.failure("tool::shell_exec", { command: "grep", args: ["--file=/etc/passwd", "x"] })).message,
    ).toContain("outside");
    expect(
      (await env.failure("tool::shell_exec", { command: "find", args: [".", "-exec", "id", ";"] })).message,
    ).toContain("not allowed");
  });

  it("kills the program and its children at the timeout", async () => {
    const { agentId } = await env.agent();
    const marker = `sleep-${agentId}`;
    const script = `require("child_process").spawn("sleep", ["30"], { stdio: "ignore", argv0: "${marker}" }); setTimeout(() => {}, 30000)`;
    const started = Date.now();
    const result = await env.tool("tool::shell_exec", {
      command: "node",
      args: ["-e", script],
      timeoutMs: 800,
    });
    expect(result).toMatchObject({ timedOut: true, exitCode: null });
    expect(Date.now() - started).toBeLessThan(10_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(running(marker)).toEqual([]);
    expect(await env.tool("tool::process_list", {})).toEqual({ processes: [] });
  });

  it("caps the output it keeps", async () => {
    await env.agent();
    const result = await env.tool<{ stdout: string; truncated: boolean }>("tool::shell_exec", {
      command: "seq",
      args: ["1", "200000"],
    });
    expect(result.truncated).toBe(true);
    expect(result.stdout.length).toBeLessThanOrEqual(100_000);
  });

  it("gives the program a minimal environment with HOME in the workspace (at /workspace)", async () => {
    await env.agent();
    const result = await env.tool<{ stdout: string }>("tool::shell_exec", {
      command: "node",
      args: ["-e", "console.log(JSON.stringify(process.env))"],
    });
    const seen = JSON.parse(result.stdout);
    expect(Object.keys(seen).sort()).toEqual(expect.arrayContaining(["HOME", "PATH"]));
    expect(seen.OPENAI_API_KEY).toBeUndefined();
    expect(seen.AGENTOS_API_KEY).toBeUndefined();
    expect(seen.HOME).toBe("/workspace");
  });
});
