import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { FastifyError, FastifyReply } from "fastify";
import { openAiShaped } from "./errors.ts";
import { everyResponseHeaders } from "./headers.ts";

/**
 * Requests Fastify refuses before any hook runs (a malformed percent-encoding in the path, say) still
 * get the JSON error body and every response header.
 */
export function answerFrameworkError(error: FastifyError, reply: FastifyReply): void {
  const status =
    error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
  const message =
    error.code === "FST_ERR_BAD_URL" ? "Malformed URL" : error.message.replace(/^FST_\w+:\s*/, "");
  const body = reply.request.url.startsWith("/v1/")
    ? openAiShaped(status, { error: message })
    : { error: message };
  reply
    .code(status)
    .headers(everyResponseHeaders)
    .type("application/json; charset=utf-8")
    .send(JSON.stringify(body));
}

/** Requests Node cannot even parse as HTTP: answered on the socket, headers included, then closed. */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const status =
    error.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : error.code === "HPE_HEADER_OVERFLOW" ? 431 : 400;
  const message =
    status === 408
      ? "Request Timeout: the request headers or body did not arrive in time"
      : (STATUS_CODES[status] ?? "Bad Request");
  const body = JSON.stringify({ error: message });
  const headers = Object.entries(everyResponseHeaders)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n${headers}\r\n${body}`,
    );
  }
  socket.destroy(error);
}
