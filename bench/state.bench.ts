import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { createEngine } from "../src/engine/index.ts";
import { stateClient } from "../src/engine/state/client.ts";
import { registerStateFunctions } from "../src/engine/state/functions.ts";
import { SqliteStateStore } from "../src/engine/state/sqlite.ts";
import { LocalBus } from "../src/engine/trigger-types/subscribe.ts";
import { compare, report, tempDir } from "./util.ts";

const KEYS = 1000;

/** state::set with compare-and-swap + state::get through the engine vs raw node:sqlite statements. */
export async function benchState(): Promise<void> {
  const dir = tempDir();
  try {
    const raw = new DatabaseSync(join(dir.path, "raw.db"));
    raw.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
      CREATE TABLE kv (scope TEXT, key TEXT, value TEXT, version INTEGER, PRIMARY KEY (scope, key)) WITHOUT ROWID;`);
    const upsert = raw.prepare(
      `INSERT INTO kv VALUES (?, ?, ?, 1) ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value, version = version + 1`,
    );
    const select = raw.prepare("SELECT value, version FROM kv WHERE scope = ? AND key = ?");
    const rawOp = (i: number) => {
      const key = `k${i % KEYS}`;
      upsert.run("bench", key, JSON.stringify({ n: i, name: "value" }));
      const row = select.get("bench", key) as { value: string };
      return JSON.parse(row.value);
    };

    const store = new SqliteStateStore(join(dir.path, "agentos.db"));
    const engine = createEngine({ bus: new LocalBus() });
    registerStateFunctions(engine, store);
    const state = stateClient((request) => engine.trigger(request));
    const versions = new Map<string, number>();
    const engineOp = async (i: number) => {
      const key = `k${i % KEYS}`;
      const written = await state.set("bench", key, { n: i, name: "value" }, versions.get(key) ?? 0);
      versions.set(key, written.version);
      return state.get("bench", key);
    };
    const { baseline, subject } = await compare(
      { name: "raw node:sqlite upsert + select", op: rawOp },
      { name: "state::set (CAS) + state::get via engine", op: engineOp },
    );
    report("State: SQLite state::set with CAS + state::get vs raw node:sqlite", subject, baseline, 0.5);
    raw.close();
    await store.close();
    engine.shutdown();
  } finally {
    dir.remove();
  }
}
