import { createHash } from "node:crypto";
import { Client, escapeIdentifier, type Notification, type Pool } from "pg";
import { nowMs } from "../shared/clock.ts";
import { type Logger, silentLogger } from "../shared/logger.ts";
import { createPool, migrate, prepared, qualifiedTable } from "./state/postgres.ts";
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
  logger?: Logger;
}

export const DEFAULT_CHANNEL = "agentos_events";

/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more (default build). */
const MAX_NOTIFY_BYTES = 7999;
/** Large bodies only need to outlive delivery; listeners read them within milliseconds. */
const RETENTION = "10 minutes";
const CLEANUP_INTERVAL_MS = 60_000;
const RECONNECT_DELAY_MS = 1_000;
/** Channel names are identifiers: at most NAMEDATALEN - 1 bytes. */
const MAX_CHANNEL_BYTES = 63;

type Message = { topic: string; data?: unknown };
type Reference = { ref: string };
type Listener = (topic: string, data: unknown) => void;

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
    this.pool = createPool(options.connectionString, 4, (error) =>
      this.logger.warn({ err: error }, "pub/sub pool connection failed"),
    );
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
    const client = this.listenerClient;
    this.listenerClient = null;
    await client?.end().catch(() => undefined);
    // Let a delivery that is fetching a large body finish before its pool goes away.
    await this.delivery;
    await this.pool.end();
  }

  private async listen(): Promise<void> {
    const client = new Client({ connectionString: this.options.connectionString });
    client.on("notification", (message) => this.onNotification(message));
    client.on("error", (error) => this.onListenerLost(client, error));
    client.on("end", () => this.onListenerLost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${escapeIdentifier(this.channel)}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listenerClient = client;
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
