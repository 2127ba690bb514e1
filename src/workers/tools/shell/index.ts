import { z } from "zod";
import { allowlistFrom, DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, runCommand } from "../command.ts";
import { agentIdField, timeoutField } from "../fields.ts";
import { defineTool } from "../tool.ts";

const shellExec = defineTool({
  id: "tool::shell_exec",
  actsFor: "agent",
  description:
    "Run a program in your workspace (it sees the workspace at /workspace, a private /tmp and the system's programs; no network unless the agent is granted egress) without a shell: command is a bare program name from the allowlist (ls, cat, grep, git, node, python3, npm, make, …), args its arguments (no pipes, redirects or globs). Returns {exitCode, stdout, stderr, truncated, timedOut, durationMs}; the program and its children are killed at the timeout.",
  input: z.strictObject({
    agentId: agentIdField,
    command: z.string().min(1, "command is required").max(256).describe("Program name, e.g. ls or npm"),
    args: z.array(z.string().max(32_768)).max(256).default([]).describe("Arguments, one per item"),
    stdin: z.string().max(1_000_000).optional().describe("Text given to the program on stdin"),
    timeoutMs: timeoutField(DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS),
  }),
  risky: true,
  async run({ agentId, command, args, stdin, timeoutMs }, ctx) {
    const root = await ctx.workspace(agentId);
    return runCommand(ctx.sandbox, root, allowlistFrom(ctx.env), {
      command,
      args,
      stdin,
      timeoutMs,
      signal: ctx.call.signal,
      egress: await ctx.egressOf(agentId),
    });
  },
});

export const shellTools = [shellExec];
