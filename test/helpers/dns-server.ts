import { createSocket, type Socket } from "node:dgram";
import { ipv6Groups } from "../../src/shared/net/ssrf.ts";

/** What the server does for one name: answer these records (TTL 60 s unless said), say NXDOMAIN, or never answer. */
export type Zone = Record<string, { A?: string[]; AAAA?: string[]; ttl?: number } | "nxdomain" | "blackhole">;

export interface FakeDnsServer {
  /** `127.0.0.1:port`, for `servers`/`setServers`. */
  address: string;
  /** Every question received, as `name TYPE` (A, AAAA), in order. */
  questions: string[];
  close(): Promise<void>;
}

const TYPES: Record<number, "A" | "AAAA"> = { 1: "A", 28: "AAAA" };

/**
 * A DNS server over UDP on loopback that knows only `zone` (a name not in it is NXDOMAIN): enough of
 * RFC 1035 for c-ares's A and AAAA queries, no external network.
 */
export async function startDnsServer(zone: Zone): Promise<FakeDnsServer> {
  const socket: Socket = createSocket("udp4");
  const questions: string[] = [];
  socket.on("message", (query, from) => {
    const { name, type, end } = readQuestion(query);
    questions.push(`${name} ${TYPES[type] ?? type}`);
    const entry = zone[name] ?? "nxdomain";
    if (entry === "blackhole") return;
    const records = entry === "nxdomain" ? [] : (entry[TYPES[type] ?? "A"] ?? []);
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // id
    header.writeUInt16BE(entry === "nxdomain" ? 0x8183 : 0x8180, 2); // response, RD, RA, rcode
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(records.length, 6);
    const ttl = entry === "nxdomain" ? 60 : (entry.ttl ?? 60);
    const answers = records.map((address) => answer(type, address, ttl));
    socket.send(Buffer.concat([header, query.subarray(12, end), ...answers]), from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    questions,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}

function readQuestion(query: Buffer): { name: string; type: number; end: number } {
  const labels: string[] = [];
  let at = 12;
  while (query[at] !== 0) {
    const length = query[at] as number;
    labels.push(query.toString("ascii", at + 1, at + 1 + length));
    at += 1 + length;
  }
  return { name: labels.join(".").toLowerCase(), type: query.readUInt16BE(at + 1), end: at + 5 };
}

function answer(type: number, address: string, ttl: number): Buffer {
  const data = type === 1 ? Buffer.from(address.split(".").map(Number)) : ipv6Bytes(address);
  const head = Buffer.alloc(12);
  head.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
  head.writeUInt16BE(type, 2);
  head.writeUInt16BE(1, 4); // IN
  head.writeUInt32BE(ttl, 6);
  head.writeUInt16BE(data.length, 10);
  return Buffer.concat([head, data]);
}

function ipv6Bytes(address: string): Buffer {
  const bytes = Buffer.alloc(16);
  for (const [index, group] of (ipv6Groups(address) ?? []).entries()) bytes.writeUInt16BE(group, index * 2);
  return bytes;
}
