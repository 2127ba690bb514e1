import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { DnsCaller } from "../../../src/shared/net/dns-resolver.ts";
import { EgressGate, SOCKET_NAME } from "../../../src/shared/process/sandbox/egress.ts";

let upstream: Server;
let port = 0;
let root: string;

beforeAll(async () => {
  upstream = createServer((_req, res) => res.end("ok"));
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.2", resolve));
  port = (upstream.address() as { port: number }).port;
  root = mkdtempSync(join(tmpdir(), "egress-realm-"));
});

afterAll(() => {
  upstream.close();
  rmSync(root, { recursive: true, force: true });
});

function get(socketPath: string, url: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path: url, headers: { host: new URL(url).host } }, (res) => {
      res.resume().on("end", () => resolve(res.statusCode));
    });
    req.on("error", reject);
    req.end();
  });
}

it("a sandbox's egress proxy looks names up as its agent's realm (its share of the resolver)", async () => {
  const callers: Array<DnsCaller | undefined> = [];
  const gate = new EgressGate(
    {
      allowPrivateNetwork: false,
      allowedAddresses: new Set(["127.0.0.2"]),
      resolve: async (_hostname, caller) => {
        callers.push(caller);
        return [{ address: "127.0.0.2", family: 4 }];
      },
    },
    join(root, "egress"),
  );
  try {
    const dir = await gate.socketDir("realm-a/agent-1", null);
    expect(await get(join(dir, SOCKET_NAME), `http://site.test:${port}/`)).toBe(200);
    expect(callers).toEqual([{ realm: "realm-a" }]);
  } finally {
    await gate.close();
  }
});
