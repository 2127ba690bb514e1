import { z } from "zod";
import { HTTP_METHODS } from "../../shared/net/guarded-request.ts";

/** A tool or integration name as it appears in a function id: `mcp::<integration>::<tool>`. */
export const toolSegment = z
  .string()
  .regex(
    /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/,
    "must be 1-64 letters, digits, _, . or - (not starting with . or -)",
  );

/** Environment variables or headers whose values come from the vault: name → vault entry. */
const secretRefs = z
  .record(z.string().min(1).max(256), z.string().min(1).max(256))
  .optional()
  .describe("env variable (stdio) or header (http) → the vault entry holding its value");

const mcpServer = z
  .strictObject({
    transport: z.enum(["stdio", "http"]).optional(),
    command: z.string().min(1).max(4096).optional(),
    args: z.array(z.string().max(4096)).max(100).default([]),
    cwd: z.string().min(1).max(4096).optional(),
    env: z.record(z.string().min(1).max(256), z.string().max(8192)).default({}),
    url: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).optional(),
    headers: z.record(z.string().min(1).max(256), z.string().max(8192)).default({}),
    secrets: secretRefs,
    timeout_ms: z.number().int().min(100).max(600_000).default(60_000),
  })
  .transform((server) => ({ ...server, transport: server.transport ?? (server.command ? "stdio" : "http") }))
  .superRefine((server, ctx) => {
    if (server.transport === "stdio" && !server.command)
      ctx.addIssue({ code: "custom", path: ["command"], message: "a stdio server needs a command" });
    if (server.transport === "http" && !server.url)
      ctx.addIssue({ code: "custom", path: ["url"], message: "an http server needs a url" });
  });
export type McpServer = z.output<typeof mcpServer>;

/** A plain HTTP tool: `{{name}}` in the URL is replaced by that argument (URL-encoded). */
const httpTool = z.strictObject({
  name: toolSegment,
  description: z.string().max(4000).optional(),
  method: z.enum(HTTP_METHODS).default("GET"),
  url: z.url({ protocol: /^https?$/, error: "must be an http(s) URL (arguments as {{name}})" }),
  headers: z.record(z.string().min(1).max(256), z.string().max(8192)).default({}),
  secrets: secretRefs,
  /** JSON Schema properties of the arguments, shown to the model. */
  parameters: z.record(z.string().min(1).max(64), z.record(z.string(), z.unknown())).default({}),
  required: z.array(z.string().min(1).max(64)).default([]),
  timeout_ms: z.number().int().min(100).max(120_000).default(30_000),
});
export type HttpTool = z.output<typeof httpTool>;

/**
 * `integrations/<name>.toml`: an MCP server (`[mcp]`, stdio or streamable HTTP) whose tools become
 * `mcp::<name>::<tool>`, and/or plain HTTP tools (`[[http]]`) that become `http::<name>::<tool>`. A file
 * with neither is pending: it records a tool to provide (a migration writes one for each tool it cannot
 * map) and makes nothing callable until one is filled in.
 */
export const integrationFile = z.strictObject({
  name: toolSegment.optional(),
  description: z.string().max(4000).optional(),
  /** Realms whose keys and agents may call the tools (default: every realm). */
  realms: z.array(z.string().min(1).max(256)).max(100).optional(),
  /**
   * false: declared but neither started nor connected (pending) until someone sets it true. A migration
   * writes its MCP servers so: the command or URL came from an imported project and is reviewed first.
   */
  enabled: z.boolean().default(true),
  mcp: mcpServer.optional(),
  http: z.array(httpTool).max(100).optional(),
  /** Where a migrated tool came from (file and line), for whoever provides it. */
  source: z.string().max(4096).optional(),
});
export type IntegrationFile = z.output<typeof integrationFile>;

export const integrationInfo = z.object({
  name: z.string(),
  file: z.string(),
  status: z.enum(["connected", "pending", "failed"]),
  functions: z.array(z.string()).describe("The tool functions it registered"),
  realms: z.array(z.string()).optional(),
  source: z.string().optional(),
  error: z.string().optional(),
});
export const integrationList = z.object({
  integrations: z.array(
    integrationInfo
      .partial({ file: true })
      .describe("Admin keys also see file and realms; realm keys only the integrations open to them"),
  ),
});

const fileProblem = z.object({ file: z.string(), message: z.string() });
/** What integration::reload changed (by integration name), and each file it could not apply. */
export const integrationReport = z.object({
  connected: z.array(z.string()),
  unchanged: z.array(z.string()),
  pending: z.array(z.string()),
  removed: z.array(z.string()),
  problems: z.array(fileProblem),
});
/** What integration::validate found: the integrations a directory declares, and each file's problem. */
export const integrationCheck = z.object({
  integrations: z.array(z.string()),
  problems: z.array(fileProblem),
});
