import { describe, expect, it } from "vitest";
import type { WebSocket } from "ws";
import { WorkerConnection } from "../../../src/engine/iii/connection.ts";
import { defaultIiiLimits } from "../../../src/engine/iii/limits.ts";

/**
 * A socket that records each frame with whether its transport held it back, and a transport that
 * counts its corks as a net.Socket does (writes leave when the count is back to zero).
 */
function fakeConnection() {
  const log: Array<{ frame: unknown; held: boolean }> = [];
  const released: number[] = [];
  let corks = 0;
  const transport = {
    cork: () => void corks++,
    uncork: () => {
      corks--;
      if (corks === 0) released.push(log.length);
    },
  };
  const socket = {
    OPEN: 1,
    readyState: 1,
    bufferedAmount: 0,
    send: (text: string) => log.push({ frame: JSON.parse(text), held: corks > 0 }),
  } as unknown as WebSocket;
  const conn = new WorkerConnection(socket, "127.0.0.1", defaultIiiLimits, transport);
  return { conn, log, released, corks: () => corks };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("WorkerConnection writes", () => {
  it("writes a turn's first frame at once and holds the rest of the turn for one write at its end", async () => {
    const { conn, log, released, corks } = fakeConnection();
    conn.send({ n: 1 });
    conn.send({ n: 2 });
    conn.send({ n: 3 });
    expect(log).toEqual([
      { frame: { n: 1 }, held: false },
      { frame: { n: 2 }, held: true },
      { frame: { n: 3 }, held: true },
    ]);
    expect(corks()).toBe(1);
    await nextTurn();
    expect(corks()).toBe(0);
    expect(released).toEqual([3]);
  });

  it("writes a lone frame of each turn at once, never corking", async () => {
    const { conn, log, released } = fakeConnection();
    conn.send({ n: 1 });
    await nextTurn();
    conn.send({ n: 2 });
    await nextTurn();
    expect(log).toEqual([
      { frame: { n: 1 }, held: false },
      { frame: { n: 2 }, held: false },
    ]);
    expect(released).toEqual([]);
  });

  it("releases frames sent from promise callbacks of the same turn (answers to a burst of results)", async () => {
    const { conn, log, corks } = fakeConnection();
    conn.send({ n: 0 });
    await Promise.all([1, 2, 3].map(async (n) => conn.send({ n })));
    expect(log.map((entry) => entry.held)).toEqual([false, true, true, true]);
    await nextTurn();
    expect(corks()).toBe(0);
  });

  it("sends without a transport, frame by frame", async () => {
    const log: string[] = [];
    const socket = { OPEN: 1, readyState: 1, bufferedAmount: 0, send: (text: string) => log.push(text) };
    const conn = new WorkerConnection(socket as unknown as WebSocket, "127.0.0.1", defaultIiiLimits);
    expect(conn.send({ n: 1 }) && conn.send({ n: 2 })).toBe(true);
    expect(log).toEqual(['{"n":1}', '{"n":2}']);
  });
});
