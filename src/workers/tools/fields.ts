import { z } from "zod";

/**
 * The agent a tool acts for (`actsFor: "agent"`): filled in by the engine with the calling agent's own id
 * when an agent calls; other callers name the agent.
 */
export const agentIdField = z
  .string()
  .min(1, "agentId is required")
  .max(256)
  .describe("The agent whose workspace (or data) the tool acts on");

export const pathField = (what = "File path") =>
  z
    .string({ error: "path must be a string" })
    .max(4096, "path must be at most 4096 characters")
    .describe(`${what}, relative to your workspace`);

export const timeoutField = (defaultMs: number, maxMs: number) =>
  z
    .number()
    .int()
    .min(100, "timeoutMs must be at least 100")
    .max(maxMs, `timeoutMs must be at most ${maxMs}`)
    .default(defaultMs)
    .describe(`Milliseconds before the command and its children are killed (default ${defaultMs})`);
