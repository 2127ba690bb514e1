import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, TEST_ADMIN_KEY, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let port: number;
const sockets: Socket[] = [];

beforeAll(async () => {
  server = await startTestServer({
    receiveTimeoutMs: 1500,
    headersTimeoutMs: 1000,
    maxInFlight: 40,
    maxInFlightPerClient: 10,
  });
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await server.close();
});

/** A request whose body never finishes: Content-Length 1000, 3 bytes sent. Resolves when connected. */
function slowBody(localAddress: string): Promise<{ socket: Socket; closed: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, localAddress }, () => {
      socket.write(
        `POST /api/ledger/spend HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_ADMIN_KEY}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"r',
      );
      resolve({ socket, closed });
    });
    let received = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => (received += chunk));
    const closed = new Promise<string>((done) => socket.on("close", () => done(received)));
    socket.on("error", () => undefined);
    socket.once("error", reject);
    sockets.push(socket);
  });
}

/** The status of a GET sent from a given loopback address. */
function get(path: string, localAddress: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, localAddress }, () => {
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_ADMIN_KEY}\r\nConnection: close\r\n\r\n`,
      );
    });
    let text = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
    socket.on("end", () => resolve(Number(text.split(" ")[1])));
    socket.on("error", reject);
  });
}

describe("a flood of slow bodies", () => {
  it("takes no more than its share of slots, leaves /healthz and other clients answering, and is cut off", async () => {
    // 20 stalled uploads from one address (its share is 10), 10 more from each of three others: every
    // global slot the flood could take.
    const flood = [];
    for (let i = 0; i < 20; i++) flood.push(await slowBody("127.0.0.1"));
    for (const address of ["127.0.0.2", "127.0.0.3", "127.0.0.4"]) {
      for (let i = 0; i < 10; i++) flood.push(await slowBody(address));
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The excess of the first address was refused at once (429), not held.
    const refused = await Promise.all(flood.slice(10, 20).map((entry) => entry.closed));
    for (const text of refused) expect(text).toMatch(/^HTTP\/1\.1 429/);

    // While the flood holds its slots: /healthz answers from anywhere, promptly.
    expect(await get("/healthz", "127.0.0.1")).toBe(200);
    expect(await get("/healthz", "127.0.0.9")).toBe(200);
    // Another client is served: a body still arriving holds no global slot (only its address's share).
    expect(await get("/api/health", "127.0.0.6")).toBe(200);

    // The stalled uploads are cut off with 408 after the receive timeout (1.5 s here; the 300 s request
    // timeout held them before, far past this test's own time limit).
    const held = [...flood.slice(0, 10), ...flood.slice(20)];
    const answers = await Promise.all(held.map((entry) => entry.closed));
    for (const text of answers) expect(text).toMatch(/^HTTP\/1\.1 408[\s\S]*did not arrive in time/);

    // And every slot is free again: an authenticated route answers for a new client.
    expect(await get("/api/health", "127.0.0.5")).toBe(200);
  }, 20_000);

  it("closes a connection whose headers never finish (408 after the headers timeout)", async () => {
    const socket = connect({ host: "127.0.0.1", port });
    sockets.push(socket);
    let received = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => (received += chunk));
    socket.on("error", () => undefined);
    socket.write("GET /api/health HTTP/1.1\r\nHost: x\r\nX-Slow: ");
    await new Promise((resolve) => socket.on("close", resolve));
    expect(received).toMatch(/^HTTP\/1\.1 408/);
  }, 20_000);
});
