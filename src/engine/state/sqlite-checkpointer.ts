import { Worker } from "node:worker_threads";

/**
 * Past this many pages in the WAL (16 MiB), the service's own connection finishes a checkpoint right
 * after a commit: under steady load it writes again before the thread's passive checkpoint can catch up,
 * and SQLite starts the WAL over only once a checkpoint reached its end with no transaction open.
 */
const LONG_WAL_FRAMES = 4096;

/** Between two checkpoints (each syncs the file): writes in between are copied by the next one. */
const PAUSE_MS = 25;

/**
 * What the checkpointer thread runs: its own connection to the file, and a PASSIVE checkpoint (copies
 * what it can of the WAL into the database file without waiting for anyone) each time it is nudged.
 */
const THREAD = `
const { parentPort, workerData } = require("node:worker_threads");
const { DatabaseSync } = require("node:sqlite");
const db = new DatabaseSync(workerData.path);
db.exec("PRAGMA busy_timeout = 5000");
const passive = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
parentPort.on("message", () => {
  let log = 0;
  try {
    log = passive.get().log;
  } catch {}
  setTimeout(() => parentPort.postMessage(log), ${PAUSE_MS});
});
`;

/**
 * Moves WAL checkpoints off the service's thread. SQLite's automatic checkpoint runs inside the commit
 * that crosses the WAL's threshold: it copies pages into the database file and syncs it, on the thread
 * that serves requests (about a third of the commits' cost under load). Here a thread of its own does
 * it after commits, one checkpoint at a time, and never while the file is idle; a long WAL is finished
 * by the connection itself (see LONG_WAL_FRAMES), so it stays bounded.
 */
export class Checkpointer {
  private readonly worker: Worker;
  private busy = false;
  private again = false;
  /** The WAL has grown long: the connection should checkpoint to its end after its next commit. */
  long = false;

  constructor(path: string) {
    this.worker = new Worker(THREAD, { eval: true, workerData: { path } });
    this.worker.unref();
    this.worker.on("message", (log: number) => {
      this.busy = false;
      if (log > LONG_WAL_FRAMES) this.long = true;
      if (this.again) this.nudge();
    });
    // A thread that cannot start (or dies) leaves the WAL to grow until the next start: log nothing, lose nothing.
    this.worker.on("error", () => undefined);
  }

  /** After a commit: checkpoint now, or once the running one is done. */
  nudge(): void {
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = true;
    this.again = false;
    this.worker.postMessage(0);
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
