import { describe, expect, it } from "vitest";
import { call } from "../../helpers/control-plane.ts";
import { toolsServer } from "./setup.ts";

describe("a service whose sandbox cannot be set up", () => {
  // The probe fails as it would where bubblewrap is missing.
  const env = toolsServer({ AGENTOS_SANDBOX_BWRAP: "/nonexistent/bwrap" });

  it("refuses every tool that starts a program, saying what to install, and runs nothing unconfined", async () => {
    await env.agent();
    for (const [id, payload] of [
      ["tool::shell_exec", { command: "true" }],
      ["tool::code_test", { command: "npm", args: ["test"] }],
      ["tool::git_status", {}],
    ] as const) {
      const failure = await env.failure(id, payload);
      expect(failure.status, id).toBe(503);
      expect(failure.message).toContain("the sandbox is unavailable");
      expect(failure.message).toContain("AGENTOS_SANDBOX_BWRAP=/nonexistent/bwrap is not an executable");
      expect(failure.message).toContain("apt-get install -y bubblewrap");
    }
    // Tools that run no program still work.
    expect(await env.tool("tool::file_write", { path: "a.txt", content: "x" })).toMatchObject({ bytes: 1 });
  });

  it("says so in /api/health", async () => {
    const { body } = await call(env.server, "GET", "/api/health");
    expect(body.sandbox.mode).toBe("unavailable");
    expect(body.sandbox.reason).toContain("bubblewrap");
  });
});

describe("a service whose operator turned the sandbox off", () => {
  const env = toolsServer({ AGENTOS_SANDBOX: "off" });

  it("runs programs unconfined, in the workspace's real directory, and says so in /api/health", async () => {
    await env.agent();
    const pwd = await env.tool<{ stdout: string }>("tool::shell_exec", { command: "pwd" });
    expect(pwd.stdout.trim()).toMatch(/workspaces\/agent-/);
    const { body } = await call(env.server, "GET", "/api/health");
    expect(body.sandbox).toEqual({ mode: "off" });
  });
});
