import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { AppError } from "../../shared/errors.ts";
import type { McpServer } from "./schema.ts";

export interface McpTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

const CLIENT_INFO = { name: "agentos", version: "0.0.1" };
/** Pages of tools/list read at most (a server that keeps paging is cut off here). */
const MAX_TOOL_PAGES = 20;

/**
 * One MCP server of an integration file. Connects on `open()`; a call after the server went away
 * (a stdio process that exited, an HTTP session that expired) reconnects once before failing.
 */
export class McpConnection {
  private client: Client | undefined;
  private opening: Promise<Client> | undefined;

  private readonly integration: string;
  private readonly server: McpServer;
  /** Values of the file's `secrets`, read from the vault: env variables (stdio) or headers (http). */
  private readonly secretValues: Record<string, string>;

  constructor(integration: string, server: McpServer, secretValues: Record<string, string>) {
    this.integration = integration;
    this.server = server;
    this.secretValues = secretValues;
  }

  async open(): Promise<McpTool[]> {
    const client = await this.connected();
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const listed = await client.listTools(cursor ? { cursor } : undefined, {
        timeout: this.server.timeout_ms,
      });
      for (const tool of listed.tools)
        tools.push({
          name: tool.name,
          description: tool.description,
          inputSchema: tool.inputSchema as Record<string, unknown>,
        });
      cursor = listed.nextCursor;
      if (!cursor) break;
    }
    return tools;
  }

  async call(tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<unknown> {
    const attempt = async () => {
      const client = await this.connected();
      return client.callTool({ name: tool, arguments: args }, undefined, {
        timeout: this.server.timeout_ms,
        signal,
      });
    };
    let result: Awaited<ReturnType<typeof attempt>>;
    try {
      result = await attempt();
    } catch (error) {
      if (signal?.aborted || !this.isConnectionLost(error)) throw this.failure(tool, error);
      await this.close();
      result = await attempt().catch((again) => {
        throw this.failure(tool, again);
      });
    }
    const content = (result.content ?? []) as Array<{ type: string; text?: string }>;
    const text = content
      .filter((part) => part.type === "text")
      .map((part) => part.text)
      .join("\n");
    if (result.isError)
      throw new AppError(
        "upstream",
        `mcp::${this.integration}::${tool} answered an error: ${text || "(no text)"}`,
      );
    return {
      text,
      content,
      ...(result.structuredContent ? { structured: result.structuredContent } : {}),
    };
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.opening = undefined;
    await client?.close().catch(() => undefined);
  }

  private connected(): Promise<Client> {
    if (this.client) return Promise.resolve(this.client);
    this.opening ??= this.connect().then(
      (client) => {
        this.client = client;
        return client;
      },
      (error) => {
        this.opening = undefined;
        throw error;
      },
    );
    return this.opening;
  }

  private async connect(): Promise<Client> {
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    const { server } = this;
    const transport =
      server.transport === "stdio"
        ? new StdioClientTransport({
            command: server.command as string,
            args: server.args,
            cwd: server.cwd,
            env: { ...getDefaultEnvironment(), ...server.env, ...this.secretValues },
            stderr: "ignore",
          })
        : new StreamableHTTPClientTransport(new URL(server.url as string), {
            requestInit: { headers: { ...server.headers, ...this.secretValues } },
          });
    // Forget a connection whose transport closed, so the next call reconnects.
    client.onclose = () => {
      if (this.client === client) {
        this.client = undefined;
        this.opening = undefined;
      }
    };
    try {
      await client.connect(transport, { timeout: server.timeout_ms });
    } catch (error) {
      await client.close().catch(() => undefined);
      const where = server.transport === "stdio" ? server.command : server.url;
      throw new AppError(
        "upstream",
        `MCP server ${where} of ${this.integration} did not connect: ${(error as Error).message}`,
      );
    }
    return client;
  }

  private isConnectionLost(error: unknown): boolean {
    return !this.client || /closed|ECONNREFUSED|ECONNRESET|EPIPE|session/i.test((error as Error).message);
  }

  private failure(tool: string, error: unknown): AppError {
    if (error instanceof AppError) return error;
    return new AppError("upstream", `mcp::${this.integration}::${tool} failed: ${(error as Error).message}`);
  }
}
