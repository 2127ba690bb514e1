import { statfs } from "node:fs/promises";
import os from "node:os";
import { z } from "zod";
import { badRequest } from "../../../shared/errors.ts";
import { agentIdField } from "../fields.ts";
import { defineTool } from "../tool.ts";
import { directorySize, processesUnder } from "./inspect.ts";
import { checkConnectivity } from "./network.ts";

/** Variables tool::env_get may read: nothing that could hold a secret. */
export const SAFE_ENV = ["LANG", "LC_ALL", "TZ", "NODE_ENV", "AGENTOS_ENGINE_PORT", "AGENTOS_HOST"];

const systemInfo = defineTool({
  id: "tool::system_info",
  description: "The host's OS, CPUs, memory, load and uptime.",
  input: z.strictObject({}),
  run: () => ({
    platform: os.platform(),
    release: os.release(),
    arch: os.arch(),
    hostname: os.hostname(),
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? null,
    totalMemoryBytes: os.totalmem(),
    freeMemoryBytes: os.freemem(),
    loadAverage: os.loadavg(),
    uptimeSeconds: Math.round(os.uptime()),
    node: process.version,
  }),
});

const processList = defineTool({
  id: "tool::process_list",
  actsFor: "agent",
  description:
    "The processes running in your workspace (started by your commands): [{pid, command, args, rssBytes, state}].",
  input: z.strictObject({ agentId: agentIdField }),
  async run({ agentId }, ctx) {
    const root = await ctx.workspace(agentId);
    return { processes: await processesUnder(root) };
  },
});

const diskUsage = defineTool({
  id: "tool::disk_usage",
  actsFor: "agent",
  description:
    "Disk space of the file system holding your workspace ({totalBytes, freeBytes, usedPercent}) and how much your workspace takes.",
  input: z.strictObject({ agentId: agentIdField }),
  async run({ agentId }, ctx) {
    const root = await ctx.workspace(agentId);
    const fs = await statfs(root);
    const total = fs.blocks * fs.bsize;
    const free = fs.bavail * fs.bsize;
    return {
      totalBytes: total,
      freeBytes: free,
      usedPercent: total === 0 ? 0 : Math.round(((total - free) / total) * 1000) / 10,
      workspace: await directorySize(root),
    };
  },
});

const networkCheck = defineTool({
  id: "tool::network_check",
  description:
    "Whether a host answers: resolves it and opens a TCP connection to port (default 443) within timeoutMs. {reachable, addresses, latencyMs, error}. Private and loopback addresses are refused.",
  input: z.strictObject({
    host: z.string().min(1).max(253).describe("Host name or IP address"),
    port: z.number().int().min(1).max(65_535).default(443),
    timeoutMs: z.number().int().min(100).max(30_000).default(5000),
  }),
  run: (input, ctx) => checkConnectivity(input, ctx.policy),
});

const envGet = defineTool({
  id: "tool::env_get",
  description: `Read an environment variable of the service; only these are readable: ${SAFE_ENV.join(", ")}.`,
  input: z.strictObject({ name: z.string().min(1).max(256) }),
  run: ({ name }, ctx) => {
    if (!SAFE_ENV.includes(name))
      throw badRequest(`${name} is not readable (readable: ${SAFE_ENV.join(", ")})`);
    return { name, value: ctx.env[name] ?? null };
  },
});

export const systemTools = [systemInfo, processList, diskUsage, networkCheck, envGet];
