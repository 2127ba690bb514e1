import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { guardedRequest } from "../../../src/shared/net/guarded-request.ts";
import { fakeDnsPolicy } from "../../helpers/fake-dns.ts";

const policy = fakeDnsPolicy({ "switching.test": "127.0.0.2" });
let server: Server;
let port = 0;

beforeAll(async () => {
  // Answers any request by switching protocols, which a plain GET never asked for.
  server = createServer((socket) => {
    socket.on("error", () => undefined);
    socket.once("data", () =>
      socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.2", resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("guardedRequest against a hostile server", () => {
  it("fails a 101 Switching Protocols answer at once, naming it, rather than waiting out the timeout", async () => {
    await expect(
      guardedRequest(`http://switching.test:${port}/`, { maxBytes: 1000, policy }),
    ).rejects.toMatchObject({
      status: 422,
      message: "switching.test answered 101 Switching Protocols to a plain HTTP request",
    });
  });
});
