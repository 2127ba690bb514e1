import { z } from "zod";
import { AppError, badRequest } from "../../../shared/errors.ts";
import { guardedRequest, HTTP_METHODS } from "../../../shared/net/guarded-request.ts";
import { agentIdField, pathField } from "../fields.ts";
import { resolveInside, shown } from "../sandbox.ts";
import { defineTool } from "../tool.ts";
import { writeInside } from "../workspace-fs.ts";

const MAX_RESPONSE_BYTES = 5_000_000;
const MAX_DOWNLOAD_BYTES = 50 * 1024 * 1024;
const RETRYABLE = new Set([429, 502, 503, 504]);

const apiCall = defineTool({
  id: "tool::api_call",
  description:
    "Call an HTTP API: {status, headers, body (parsed when JSON), truncated}. body may be text or a JSON value (sent as application/json). Retries network failures and 429/502/503/504 up to retries times. Loopback, private and link-local addresses are refused.",
  input: z.strictObject({
    url: z.string().min(1).max(8192),
    method: z.enum(HTTP_METHODS).default("GET"),
    headers: z.record(z.string().max(256), z.string().max(8192)).default({}),
    query: z
      .record(z.string().max(256), z.string().max(8192))
      .optional()
      .describe("Added to the URL's query string"),
    body: z.unknown().optional(),
    timeoutMs: z.number().int().min(100).max(60_000).default(30_000),
    retries: z.number().int().min(0).max(3).default(0),
  }),
  risky: (input: { method?: string }) => !["GET", "HEAD", "OPTIONS"].includes(input.method ?? "GET"),
  async run({ url, method, headers, query, body, timeoutMs, retries }, ctx) {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw badRequest(`url is not a URL: ${url}`);
    }
    for (const [name, value] of Object.entries(query ?? {})) target.searchParams.append(name, value);
    const json = body !== undefined && typeof body !== "string";
    const payload = body === undefined ? undefined : json ? JSON.stringify(body) : (body as string);
    const sentHeaders = {
      ...(json && !hasHeader(headers, "content-type") ? { "content-type": "application/json" } : {}),
      ...headers,
    };
    for (let attempt = 0; ; attempt++) {
      try {
        const response = await guardedRequest(target, {
          method,
          headers: sentHeaders,
          body: payload,
          maxBytes: MAX_RESPONSE_BYTES,
          timeoutMs,
          policy: ctx.policy,
          signal: ctx.call.signal,
        });
        if (attempt < retries && RETRYABLE.has(response.status)) {
          await pause(1000 * (attempt + 1));
          continue;
        }
        const text = response.body.toString("utf8");
        const isJson = String(response.headers["content-type"] ?? "").includes("json");
        return {
          url: response.url,
          status: response.status,
          headers: response.headers,
          body: isJson ? parsed(text) : text,
          truncated: response.truncated,
          attempts: attempt + 1,
        };
      } catch (error) {
        const transient =
          error instanceof AppError && (error.code === "unavailable" || error.code === "timeout");
        if (!transient || attempt >= retries) throw error;
        await pause(1000 * (attempt + 1));
      }
    }
  },
});

const mediaDownload = defineTool({
  id: "tool::media_download",
  actsFor: "agent",
  description: `Download a file (at most ${MAX_DOWNLOAD_BYTES} bytes) by http(s) URL into your workspace: {path, bytes, contentType}. Loopback, private and link-local addresses are refused.`,
  input: z.strictObject({
    agentId: agentIdField,
    url: z.string().min(1).max(8192),
    path: pathField("Where to save it").optional(),
  }),
  risky: true,
  async run({ agentId, url, path }, ctx) {
    const root = await ctx.workspace(agentId);
    const response = await guardedRequest(url, {
      maxBytes: MAX_DOWNLOAD_BYTES,
      timeoutMs: 60_000,
      policy: ctx.policy,
      signal: ctx.call.signal,
    });
    if (response.status < 200 || response.status > 299)
      throw new AppError("unprocessable", `Download failed: ${url} answered ${response.status}`);
    if (response.truncated) throw badRequest(`${url} is larger than ${MAX_DOWNLOAD_BYTES} bytes`);
    const name = path ?? (fileNameOf(response.url) || "download");
    const full = await resolveInside(root, name);
    await ctx.sandbox.checkRoom(root, response.body.length);
    await writeInside(root, full, response.body);
    return {
      path: shown(root, full),
      bytes: response.body.length,
      contentType: response.headers["content-type"] ?? null,
    };
  },
});

const hasHeader = (headers: Record<string, string>, name: string) =>
  Object.keys(headers).some((key) => key.toLowerCase() === name);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export const httpTools = [apiCall, mediaDownload];

/** The last segment of the URL's path, decoded; as it is when its escapes are not UTF-8 (`%E0%A4%A`). */
function fileNameOf(url: string): string {
  const segment = new URL(url).pathname.split("/").pop() ?? "";
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
