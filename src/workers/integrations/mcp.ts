import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import type { JsonSchemaValidator, jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import { Agent, type Dispatcher, fetch as undiciFetch } from "undici";
import { AppError, isAppError } from "../../shared/errors.ts";
import { guardedLookup, type NetworkPolicy } from "../../shared/net/guarded-request.ts";
import { checkWebUrl } from "../../shared/net/ssrf.ts";
import { urlWithoutSecrets } from "../../shared/net/url-without-secrets.ts";
import type { McpServer } from "./schema.ts";
import { refProblem } from "./schema-refs.ts";

export interface McpTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

const CLIENT_INFO = { name: "agentos", version: "0.0.1" };
/** Pages of tools/list read at most (a server that keeps paging is cut off here). */
const MAX_TOOL_PAGES = 20;
/**
 * What one server may make this process hold: each tool becomes a function (with a validator) that every
 * agent granted it is shown on every turn, so a server listing more, or longer, is refused or cut here.
 */
export const MAX_TOOLS = 1000;
export const MAX_DESCRIPTION_CHARS = 4000;
export const MAX_SCHEMA_CHARS = 100_000;
/** Characters of all the input schemas and descriptions together (each schema property costs a validator). */
export const MAX_LISTED_CHARS = 500_000;
/** Bytes of one message from an HTTP server (a JSON answer, or one event of a stream). */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/**
 * Bytes of one line (one message) from a stdio server: the SDK holds what it reads until a newline, and
 * past this it stops the server. Its standard error is not read at all (`stderr: "ignore"`).
 */
export const MAX_LINE_BYTES = MAX_MESSAGE_BYTES;
/** The SDK's error for a stdio server's line over MAX_LINE_BYTES (after which it stops the server). */
const LINE_TOO_LONG = /^ReadBuffer exceeded/;
/** Characters of a server's words kept in an error (an error body can be anything it likes). */
const MAX_ERROR_CHARS = 1000;

/**
 * The server's output schemas are not compiled (the SDK would compile each with Ajv, whose `pattern`s
 * are regular expressions the server chose, run on content the server chose: a ReDoS that blocks the
 * whole service). Structured content is passed on as data; nothing here relies on its shape.
 */
const UNCHECKED_OUTPUT: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input) => ({ valid: true, data: input as T, errorMessage: undefined });
  },
};

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
  /** The SSRF rule an HTTP server's every request passes, as the web tools' and HTTP tools' do. */
  private readonly policy: NetworkPolicy;
  /** The HTTP connection pool of the current connection (its sockets checked by the rule). */
  private dispatcher: Dispatcher | undefined;
  /** Why the SDK stopped the current connection's server, when it did (a line over MAX_LINE_BYTES). */
  private stopped: string | undefined;

  constructor(
    integration: string,
    server: McpServer,
    secretValues: Record<string, string>,
    policy: NetworkPolicy,
  ) {
    this.integration = integration;
    this.server = server;
    this.secretValues = secretValues;
    this.policy = policy;
  }

  async open(): Promise<McpTool[]> {
    const client = await this.connected();
    const tools: McpTool[] = [];
    let listedChars = 0;
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const listed = await client
        .listTools(cursor ? { cursor } : undefined, { timeout: this.server.timeout_ms })
        .catch((error) => {
          throw this.failure("tools/list", error);
        });
      if (tools.length + listed.tools.length > MAX_TOOLS)
        throw new AppError(
          "upstream",
          `MCP server of ${this.integration} lists more than ${MAX_TOOLS} tools: not served`,
        );
      for (const tool of listed.tools) {
        const inputSchema = tool.inputSchema as Record<string, unknown>;
        const description = tool.description?.slice(0, MAX_DESCRIPTION_CHARS);
        const schemaChars = JSON.stringify(inputSchema).length;
        if (schemaChars > MAX_SCHEMA_CHARS)
          throw new AppError(
            "upstream",
            `MCP server of ${this.integration}: the input schema of ${clip(tool.name, 64)} is over ${MAX_SCHEMA_CHARS} characters`,
          );
        // Its validator runs on every call: one that never ends would fail each call, or hold the service.
        const problem = refProblem(inputSchema);
        if (problem)
          throw new AppError(
            "upstream",
            `MCP server of ${this.integration}: the input schema of ${clip(tool.name, 64)} ${problem}`,
          );
        listedChars += schemaChars + (description?.length ?? 0);
        if (listedChars > MAX_LISTED_CHARS)
          throw new AppError(
            "upstream",
            `MCP server of ${this.integration}: its tools' schemas and descriptions are over ${MAX_LISTED_CHARS} characters`,
          );
        tools.push({ name: tool.name, description, inputSchema });
      }
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
      if (signal?.aborted || isTimeout(error)) {
        // The SDK gives up on the answer but keeps reading its stream: an HTTP server that never ends one
        // would keep this process reading (and holding it) after the call is over. Closing stops every read.
        if (this.server.transport === "http") await this.close();
        throw this.failure(tool, error);
      }
      // A server stopped for what it sent would only send it again.
      if (this.stopped || !this.isConnectionLost(error)) throw this.failure(tool, error);
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
    const dispatcher = this.dispatcher;
    this.client = undefined;
    this.opening = undefined;
    this.dispatcher = undefined;
    await client?.close().catch(() => undefined);
    await dispatcher?.destroy().catch(() => undefined);
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
    const client = new Client(CLIENT_INFO, { capabilities: {}, jsonSchemaValidator: UNCHECKED_OUTPUT });
    const { server } = this;
    const transport =
      server.transport === "stdio"
        ? new StdioClientTransport({
            command: server.command as string,
            args: server.args,
            cwd: server.cwd,
            env: { ...getDefaultEnvironment(), ...server.env, ...this.secretValues },
            stderr: "ignore",
            maxBufferSize: MAX_LINE_BYTES,
          })
        : this.httpTransport(server.url as string);
    this.stopped = undefined;
    // Told before the SDK closes the transport, whose pending requests then fail as "Connection closed".
    client.onerror = (error) => {
      if (LINE_TOO_LONG.test(error.message) && (this.client === client || !this.client))
        this.stopped = `MCP server ${server.command} of ${this.integration} sent a line of more than ${MAX_LINE_BYTES} bytes: stopped`;
    };
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
      // Shown to realm keys in the integration's status: an URL's user:password or query may be a key,
      // in the words of the failure too.
      let message = (error as Error).message;
      let where = server.command;
      if (server.transport !== "stdio") {
        const url = server.url as string;
        where = urlWithoutSecrets(url);
        for (const form of [url, new URL(url).href]) message = message.replaceAll(form, where);
      }
      if (this.stopped) throw new AppError("upstream", this.stopped);
      throw new AppError(
        "upstream",
        `MCP server ${where} of ${this.integration} did not connect: ${clip(message, MAX_ERROR_CHARS)}`,
      );
    }
    return client;
  }

  /** A pool of its own for each connection, whose sockets pass the SSRF rule; the previous one's go. */
  private httpTransport(url: string): StreamableHTTPClientTransport {
    void this.dispatcher?.destroy().catch(() => undefined);
    const dispatcher = new Agent({ connect: { lookup: guardedLookup(this.policy) } });
    this.dispatcher = dispatcher;
    return new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { ...this.server.headers, ...this.secretValues } },
      fetch: withoutStandaloneStream(boundedFetch(MAX_MESSAGE_BYTES, guardedFetch(this.policy, dispatcher))),
    });
  }

  private isConnectionLost(error: unknown): boolean {
    return !this.client || /closed|ECONNREFUSED|ECONNRESET|EPIPE|session/i.test((error as Error).message);
  }

  private failure(tool: string, error: unknown): AppError {
    if (error instanceof AppError) return error;
    if (this.stopped)
      return new AppError("upstream", `mcp::${this.integration}::${tool} failed: ${this.stopped}`);
    const message = clip((error as Error).message, MAX_ERROR_CHARS);
    return new AppError("upstream", `mcp::${this.integration}::${tool} failed: ${message}`);
  }
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);

/** The SDK's error for a request that got no answer in time (McpError RequestTimeout). */
const isTimeout = (error: unknown) => (error as { code?: unknown }).code === ErrorCode.RequestTimeout;

/**
 * fetch under the SSRF rule: a literal IP host is checked before, a name at connect time on the address
 * the socket uses (so a rebound DNS answer cannot slip past), redirects included (the SDK follows only
 * those to the same origin, each through here). A blocked address is the rule's own error.
 */
function guardedFetch(policy: NetworkPolicy, dispatcher: Dispatcher): typeof fetch {
  return async (input, init) => {
    checkWebUrl(input instanceof Request ? input.url : String(input), policy);
    try {
      return (await undiciFetch(input as Parameters<typeof undiciFetch>[0], {
        ...(init as Parameters<typeof undiciFetch>[1]),
        dispatcher,
      })) as unknown as Response;
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause;
      throw isAppError(cause) ? cause : error;
    }
  };
}

/**
 * fetch without the standalone event stream (a GET that resumes nothing): it carries only what the server
 * starts, notifications and requests this client neither asks for nor uses (it declares no capabilities),
 * and a server could flood it for as long as it stays connected, holding the event loop of the whole
 * service. It is answered 405, as by a server without one (the SDK goes on without it). A GET resuming a
 * call's stream (Last-Event-ID) goes through: that one ends with the call.
 */
export function withoutStandaloneStream(base: typeof fetch): typeof fetch {
  return (input, init) => {
    if (init?.method === "GET" && !new Headers(init.headers).has("last-event-id"))
      return Promise.resolve(new Response(null, { status: 405 }));
    return base(input, init);
  };
}

/** Statuses whose responses have no body (a Response with one cannot be made). */
const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * fetch for the HTTP transport that ends a response whose one message is over `maxBytes`: the SDK reads a
 * JSON answer whole and an event of a stream until it ends, so a server could otherwise make this process
 * hold as much as it sends. A stream's events are counted one by one (it may stay open for long).
 */
export function boundedFetch(maxBytes: number, base: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const response = await base(input, init);
    if (!response.body || NULL_BODY.has(response.status)) return response;
    const stream = (response.headers.get("content-type") ?? "").includes("text/event-stream");
    let size = 0;
    let newline = false;
    const limited = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          if (!stream) size += chunk.byteLength;
          else
            for (const byte of chunk) {
              // An empty line ends an event (LF LF, CR LF CR LF).
              if (byte === 10) {
                if (newline) size = 0;
                newline = true;
              } else if (byte !== 13) newline = false;
              size++;
            }
          if (size > maxBytes) throw new Error(`the server sent a message of more than ${maxBytes} bytes`);
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(limited, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
