import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, TEST_ADMIN_KEY, type TestServer } from "../helpers/server.ts";

// Four global slots, eight per address: two addresses can stall four times as many uploads as there
// are slots, each within its own share.
const MAX_IN_FLIGHT = 4;
const PER_CLIENT = 8;

let server: TestServer;
let port: number;
const sockets: Socket[] = [];

beforeAll(async () => {
  server = await startTestServer({
    receiveTimeoutMs: 1500,
    headersTimeoutMs: 1000,
    maxInFlight: MAX_IN_FLIGHT,
    maxInFlightPerClient: PER_CLIENT,
  });
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await server.close();
});

/** An authenticated upload that sends its headers and 3 of its 1000 bytes, then nothing. */
function stalledUpload(localAddress: string): Promise<{ closed: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, localAddress }, () => {
      socket.write(
        `POST /api/keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_ADMIN_KEY}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"n',
      );
      resolve({ closed });
    });
    let received = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => (received += chunk));
    const closed = new Promise<string>((done) => socket.on("close", () => done(received)));
    socket.on("error", () => undefined);
    socket.once("error", reject);
    sockets.push(socket);
  });
}

/** The status of an authenticated request sent from a given loopback address. */
function send(method: string, path: string, localAddress: string, body = ""): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, localAddress }, () => {
      socket.write(
        `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_ADMIN_KEY}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    });
    sockets.push(socket);
    let text = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
    socket.on("end", () => resolve(Number(text.split(" ")[1])));
    socket.on("error", reject);
  });
}

describe("uploads whose bodies trickle in", () => {
  it("hold no global in-flight slot: with more stalled uploads than slots, other clients are served until the receive timeout cuts them off", async () => {
    const stalled: Array<Promise<string>> = [];
    for (const address of ["127.0.0.2", "127.0.0.3"]) {
      for (let i = 0; i < PER_CLIENT; i++) stalled.push((await stalledUpload(address)).closed);
    }
    expect(stalled.length).toBeGreaterThan(MAX_IN_FLIGHT);
    await new Promise((resolve) => setTimeout(resolve, 200));

    // Throughout the flood, another address is served: reads, and a write whose body has arrived.
    for (let round = 0; round < 3; round++) {
      expect(await send("GET", "/api/health", "127.0.0.4")).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await send("POST", "/api/keys", "127.0.0.5", "{}")).toBe(201);
    // A stalling address still has its own share only: one more upload from it is refused at once.
    expect(await send("GET", "/api/health", "127.0.0.2")).toBe(429);

    // The stalled uploads end by themselves: 408 once the receive timeout (1.5 s here) has passed.
    for (const text of await Promise.all(stalled)) expect(text).toMatch(/^HTTP\/1\.1 408/);
    expect(await send("GET", "/api/health", "127.0.0.2")).toBe(200);
  }, 20_000);
});
