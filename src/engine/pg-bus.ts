import { createHash } from "node:crypto";
import { Client, escapeIdentifier, type Notification, type Pool } from "pg";
import { nowMs } from "../shared/clock.ts";
import { type Logger, silentLogger } from "../shared/logger.ts";
import { unavailableWhenUnreachable } from "./state/pg-errors.ts";
import { connectionTimeouts, createPool, type DatabaseTimeouts } from "./state/pg-pool.ts";
import { migrate, prepared, qualifiedTable } from "./state/postgres.ts";
import type { PubSubBus } from "./trigger-types/subscribe.ts";

export interface PgBusOptions {
  connectionString: string;
  /** Schema of the large-message table, created when missing (as for the state store). */
  schema?: string;
  /**
   * NOTIFY channel; every node of one deployment must use the same one. Default: derived from the
   * schema the tables live in, because NOTIFY is database-wide and deployments that share a
   * database in separate schemas must not hear each other.
   */
  channel?: string;
  /**
   * How often (ms) the listening connection is asked a trivial query; one that has not answered by the
   * next check is replaced. Default 30 s.
   */
  healthCheckMs?: number;
  /** Size of the publishing pool (default 4); the listening connection is one more. */
  max?: number;
  /** Time limits of the connections (default DEFAULT_DATABASE_TIMEOUTS). */
  timeouts?: DatabaseTimeouts;
  logger?: Logger;
}

export const DEFAULT_CHANNEL = "agentos_events";

/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more (default build). */
const MAX_NOTIFY_BYTES = 7999;
/** Large bodies only need to outlive delivery; listeners read them within milliseconds. */
const RETENTION = "10 minutes";
const CLEANUP_INTERVAL_MS = 60_000;
const RECONNECT_DELAY_MS = 1_000;
const HEALTH_CHECK_MS = 30_000;
/** Channel names are identifiers: at most NAMEDATALEN - 1 bytes. */
const MAX_CHANNEL_BYTES = 63;

type Message = { topic: string; data?: unknown };
type Reference = { ref: string };
type Listener = (topic: string, data: unknown) => void;
/** A server session, told apart from a later one that reuses its pid by its start time. */
type Session = { pid: number; started: string };

/**
 * Cluster pub/sub over LISTEN/NOTIFY: a message published on any node reaches the listeners of every
 * node, including the publisher's own (through the database, so all nodes see one order).
 * Delivery is at most once: a node whose listening connection is down misses what is published meanwhile.
 */
export class PgBus implements PubSubBus {
  private readonly pool: Pool;
  private readonly options: PgBusOptions;
  private channel: string;
  private readonly table: string;
  private readonly logger: Logger;
  private listeners: Listener[] = [];
  private listenerClient: Client | null = null;
  /** Deliveries run one after another so that a large message fetched from the table keeps its place. */
  private delivery: Promise<void> = Promise.resolve();
  private reconnectTimer: NodeJS.Timeout | undefined;
  private healthTimer: NodeJS.Timeout | undefined;
  /** The listening connection's check still waiting for its answer. */
  private healthCheck: Client | null = null;
  private listenerSession: Session | null = null;
  /** Sessions of listening connections that stopped answering, ended from the next one. */
  private staleSessions: Session[] = [];
  private lastCleanup = 0;
  private closed = false;

  /** Prefer `open`, which also creates the table and starts listening. */
  constructor(options: PgBusOptions) {
    this.options = options;
    this.channel = options.channel ?? DEFAULT_CHANNEL;
    if (Buffer.byteLength(this.channel) > MAX_CHANNEL_BYTES) {
      throw new Error(`pub/sub channel name longer than ${MAX_CHANNEL_BYTES} bytes`);
    }
    this.table = qualifiedTable(options.schema, "pubsub_messages");
    this.logger = options.logger ?? silentLogger();
    // Publishing needs few connections; the listening connection is separate (a pooled one cannot LISTEN).
    this.pool = createPool(options.connectionString, {
      max: options.max ?? 4,
      timeouts: options.timeouts,
      onError: (error) => this.logger.warn({ err: error }, "pub/sub pool connection failed"),
    });
  }

  static async open(options: PgBusOptions | string): Promise<PgBus> {
    const bus = new PgBus(typeof options === "string" ? { connectionString: options } : options);
    return prepared(bus, async () => {
      await migrate(bus.pool, bus.options.schema, [
        `CREATE TABLE IF NOT EXISTS ${bus.table} (
          id bigserial PRIMARY KEY,
          body text NOT NULL,
          created_at timestamptz NOT NULL DEFAULT now()
        )`,
        `CREATE INDEX IF NOT EXISTS pubsub_messages_created_at ON ${bus.table} (created_at)`,
      ]);
      if (!bus.options.channel) bus.channel = await bus.channelForSchema();
      await bus.listen();
    });
  }

  /** `agentos_events` in schema public, else `agentos_events_<schema>` (hashed when too long). */
  private async channelForSchema(): Promise<string> {
    const schema =
      this.options.schema ??
      ((await this.pool.query<{ schema: string }>("SELECT current_schema() AS schema")).rows[0]?.schema ||
        "public");
    if (schema === "public") return DEFAULT_CHANNEL;
    const channel = `${DEFAULT_CHANNEL}_${schema}`;
    if (Buffer.byteLength(channel) <= MAX_CHANNEL_BYTES) return channel;
    return `${DEFAULT_CHANNEL}_${createHash("sha256").update(schema).digest("hex").slice(0, 32)}`;
  }

  async publish(topic: string, data: unknown): Promise<void> {
    if (this.closed) throw new Error("pub/sub bus is closed");
    try {
      await this.send(topic, data);
    } catch (error) {
      throw unavailableWhenUnreachable(error);
    }
  }

  private async send(topic: string, data: unknown): Promise<void> {
    const body = JSON.stringify({ topic, data } satisfies Message);
    if (Buffer.byteLength(body) <= MAX_NOTIFY_BYTES) {
      await this.pool.query("SELECT pg_notify($1, $2)", [this.channel, body]);
      return;
    }
    // Too large for NOTIFY: store the body and notify its id. One statement, so the notification is
    // sent at commit, when the row is already visible to the listeners that will fetch it.
    await this.pool.query(
      `WITH stored AS (INSERT INTO ${this.table} (body) VALUES ($2) RETURNING id)
       SELECT pg_notify($1, json_build_object('ref', id::text)::text) FROM stored`,
      [this.channel, body],
    );
    this.cleanupSometimes();
  }

  onMessage(listener: Listener): void {
    this.listeners.push(listener);
  }

  /** Deletes stored large messages older than the retention; returns how many. */
  async cleanup(): Promise<number> {
    this.lastCleanup = nowMs();
    const result = await this.pool.query(
      `DELETE FROM ${this.table} WHERE created_at < now() - interval '${RETENTION}'`,
    );
    return result.rowCount ?? 0;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listeners = [];
    clearTimeout(this.reconnectTimer);
    clearInterval(this.healthTimer);
    const client = this.listenerClient;
    this.listenerClient = null;
    await client?.end().catch(() => undefined);
    // Let a delivery that is fetching a large body finish before its pool goes away.
    await this.delivery;
    await this.pool.end();
  }

  private async listen(): Promise<void> {
    const client = new Client({
      connectionString: this.options.connectionString,
      ...connectionTimeouts(this.options.timeouts),
    });
    client.on("notification", (message) => this.onNotification(message));
    client.on("error", (error) => this.onListenerLost(client, error));
    client.on("end", () => this.onListenerLost(client));
    let session: Session | undefined;
    try {
      await client.connect();
      await client.query(`LISTEN ${escapeIdentifier(this.channel)}`);
      session = await this.endStaleSessions(client);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listenerClient = client;
    this.listenerSession = session ?? null;
    this.watchListener();
  }

  /**
   * Ends the server side of listening connections the network dropped: the server would keep each
   * (a connection slot, and a listener that never reads, so the NOTIFY queue could not be truncated
   * and would fill up). Returns the new connection's own session.
   */
  private async endStaleSessions(client: Client): Promise<Session | undefined> {
    for (const stale of this.staleSessions.splice(0)) {
      await client
        .query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND backend_start::text = $2",
          [stale.pid, stale.started],
        )
        .catch((error) =>
          this.logger.warn({ err: error, pid: stale.pid }, "pub/sub could not end a dead session"),
        );
    }
    const { rows } = await client.query<Session>(
      "SELECT pid, backend_start::text AS started FROM pg_stat_activity WHERE pid = pg_backend_pid()",
    );
    return rows[0];
  }

  /**
   * A connection the network silently dropped (a NAT or firewall forgetting it) raises no error: the
   * node would hear nothing, ever again. So the listener must answer a query between two checks.
   */
  private watchListener(): void {
    if (this.healthTimer) return;
    this.healthTimer = setInterval(() => this.checkListener(), this.options.healthCheckMs ?? HEALTH_CHECK_MS);
    this.healthTimer.unref();
  }

  private checkListener(): void {
    const client = this.listenerClient;
    if (!client) return;
    if (this.healthCheck === client) {
      // The previous check never answered: destroy the socket, whose end() would wait on the dead peer.
      if (this.listenerSession) this.staleSessions.push(this.listenerSession);
      this.onListenerLost(client, new Error("pub/sub listening connection stopped answering"));
      client.connection.stream.destroy();
      return;
    }
    this.healthCheck = client;
    client.query("SELECT 1").then(
      () => {
        if (this.healthCheck === client) this.healthCheck = null;
      },
      // A failed query also ends the connection, which reports itself lost.
      () => undefined,
    );
  }

  private onListenerLost(client: Client, error?: Error): void {
    if (this.closed || this.listenerClient !== client) return;
    this.listenerClient = null;
    this.logger.warn({ err: error }, "pub/sub listening connection lost; reconnecting");
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    this.reconnectTimer = setTimeout(() => {
      this.listen().catch((error) => {
        this.logger.warn({ err: error }, "pub/sub could not listen again; retrying");
        this.scheduleReconnect();
      });
    }, RECONNECT_DELAY_MS);
    this.reconnectTimer.unref();
  }

  private onNotification(message: Notification): void {
    if (message.channel !== this.channel || message.payload === undefined) return;
    const payload = message.payload;
    this.delivery = this.delivery
      .then(() => this.deliver(payload))
      .catch((error) => this.logger.warn({ err: error }, "pub/sub message could not be delivered"));
  }

  private async deliver(payload: string): Promise<void> {
    if (this.closed) return;
    const parsed = JSON.parse(payload) as Message | Reference;
    const message = "ref" in parsed ? await this.fetch(parsed.ref) : parsed;
    if (!message) return;
    for (const listener of this.listeners) {
      // One failing listener must not keep the message from the others.
      try {
        listener(message.topic, message.data);
      } catch (error) {
        this.logger.warn({ err: error, topic: message.topic }, "pub/sub listener failed");
      }
    }
  }

  private async fetch(id: string): Promise<Message | null> {
    const result = await this.pool.query<{ body: string }>(`SELECT body FROM ${this.table} WHERE id = $1`, [
      id,
    ]);
    if (!result.rows[0]) {
      this.logger.warn({ id }, "pub/sub message body expired before it was read");
      return null;
    }
    return JSON.parse(result.rows[0].body) as Message;
  }

  private cleanupSometimes(): void {
    if (nowMs() - this.lastCleanup < CLEANUP_INTERVAL_MS) return;
    this.cleanup().catch((error) => this.logger.warn({ err: error }, "pub/sub cleanup failed"));
  }
}
