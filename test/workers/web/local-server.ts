import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

export interface LocalServer {
  port: number;
  /** http://127.0.0.1:<port> */
  origin: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage & { body: string }, res: ServerResponse) => void | Promise<void>;

/** A node:http server on a free port that records every request (with its body) before handling it. */
export async function startLocalServer(handler: Handler, host = "127.0.0.1"): Promise<LocalServer> {
  const requests: SeenRequest[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
    await handler(Object.assign(req, { body }), res);
  });
  server.listen(0, host);
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, body: unknown, status = 200): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
