import { type AddressInfo, connect, createServer, type Socket } from "node:net";

export interface PgProxy {
  /** The database URL, through the proxy. */
  url: string;
  /**
   * Stops the bytes of every open connection both ways without closing either end, as when a NAT or
   * firewall forgets a long-idle connection. Connections opened later pass normally.
   */
  freeze(): void;
  /** The local ports of the proxy's connections to the database (pg_stat_activity's client_port). */
  ports(): number[];
  /** Drops every connection and refuses new ones, as a database that went down. */
  close(): Promise<void>;
}

/** A TCP proxy in front of the test database, to cut its connections the ways networks do. */
export async function freezableProxy(target: URL): Promise<PgProxy> {
  const live: Array<[Socket, Socket]> = [];
  const frozen: Socket[] = [];
  const server = createServer((inbound) => {
    const outbound = connect(Number(target.port || 5432), target.hostname);
    inbound.pipe(outbound).pipe(inbound);
    const quiet = () => undefined;
    inbound.on("error", quiet);
    outbound.on("error", quiet);
    live.push([inbound, outbound]);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const proxied = new URL(target);
  proxied.hostname = "127.0.0.1";
  proxied.port = String((server.address() as AddressInfo).port);
  return {
    url: proxied.toString(),
    freeze() {
      for (const [inbound, outbound] of live.splice(0)) {
        inbound.unpipe(outbound);
        outbound.unpipe(inbound);
        inbound.pause();
        outbound.pause();
        frozen.push(inbound, outbound);
      }
    },
    ports() {
      const outbound = [...live.map(([, socket]) => socket), ...frozen.filter((_, i) => i % 2 === 1)];
      return outbound.map((socket) => socket.localPort).filter((port) => port !== undefined);
    },
    async close() {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of frozen.splice(0)) socket.destroy();
      for (const pair of live.splice(0)) for (const socket of pair) socket.destroy();
      await closed;
    },
  };
}
