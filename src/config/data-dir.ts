import { chmodSync, existsSync, mkdirSync, readdirSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, join, sep } from "node:path";
import { systemLayout } from "../shared/process/sandbox/layout.ts";
import { shippedDirs } from "../shared/process/sandbox/shipped.ts";
import { ConfigError } from "./env.ts";

/**
 * The data dir holds the database, the vault and admin keys and every agent's workspace, so it is the
 * service user's alone: made 0700 when created, tightened when it already lets others in (`mkdir data`
 * under umask 022, a mounted volume), and refused when another user owns it, since its owner could
 * plant links where the keys are written or swap the database under the service.
 */
export function prepareDataDir(dataDir: string, warn: (message: string) => void): void {
  refusePseudoFilesystem(dataDir);
  refuseSandboxVisible(dataDir);
  try {
    makeDirs(dataDir);
  } catch (error) {
    throw new ConfigError(`AGENTOS_DATA_DIR ${dataDir} cannot be created: ${(error as Error).message}`);
  }
  const info = statSync(dataDir);
  if (!info.isDirectory()) throw new ConfigError(`AGENTOS_DATA_DIR ${dataDir} is not a directory`);
  const uid = process.getuid?.();
  if (uid === undefined) return;
  if (info.uid !== uid) {
    throw new ConfigError(
      `AGENTOS_DATA_DIR ${dataDir} is owned by uid ${info.uid}, not by this process's user (uid ${uid}): ` +
        "its owner could replace the keys or the database. Run the service and the CLI as its owner, or give the service a directory of its own",
    );
  }
  const mode = info.mode & 0o777;
  if ((mode & 0o077) === 0) return;
  refuseShared(dataDir, info.mode);
  chmodSync(dataDir, 0o700);
  warn(
    `AGENTOS_DATA_DIR ${dataDir} was open to other users (mode ${mode.toString(8).padStart(4, "0")}); permissions tightened to 0700`,
  );
}

/** What the service itself keeps at the top of its data dir. */
const OWN_ENTRIES = new Set(["admin.key", "vault.key", "workspaces", "sandbox", "snapshots", "migrations"]);

/**
 * A directory open to others that holds anything but the service's own files is someone else's too
 * (/tmp, /var, a home): tightening it would lock its other users out (as root, `AGENTOS_DATA_DIR=/tmp`
 * made /tmp 0700 for everyone). Refused instead, naming the remedy.
 */
function refuseShared(dataDir: string, mode: number): void {
  const foreign = readdirSync(dataDir).filter(
    (name) => !OWN_ENTRIES.has(name) && !name.startsWith("agentos.db"),
  );
  if (foreign.length === 0) return;
  throw new ConfigError(
    `AGENTOS_DATA_DIR ${dataDir} is open to other users (mode ${(mode & 0o7777).toString(8).padStart(4, "0")}) and holds files that are not the service's (${foreign.slice(0, 3).join(", ")}${foreign.length > 3 ? ", …" : ""}): give the service a directory of its own, or make this one owner-only yourself (chmod 700)`,
  );
}

/** The kernel's own filesystems: nothing a service stores can live there. */
const PSEUDO_FILESYSTEMS = ["/proc", "/sys", "/dev"];

/**
 * A data dir under /proc, /sys or /dev cannot hold a database: in /proc, Node's recursive mkdir never
 * returned (the kernel answers ENOENT, which it takes for a missing parent, again and again) and the
 * service or CLI hung at start. Refused, by its real path, before anything is made.
 */
function refusePseudoFilesystem(dataDir: string): void {
  const real = realPathOf(dataDir);
  const inside = PSEUDO_FILESYSTEMS.find((dir) => real === dir || real.startsWith(dir + sep));
  if (inside === undefined) return;
  throw new ConfigError(
    `AGENTOS_DATA_DIR ${dataDir} is inside ${inside}, a filesystem of the kernel's where nothing can be stored. Choose a directory on a disk (e.g. /var/lib/agentos)`,
  );
}

/**
 * `dir` and its missing ancestors, owner-only, one level at a time: unlike `mkdir -p` in Node, a
 * filesystem that answers ENOENT under an existing parent fails here instead of being retried forever.
 */
function makeDirs(dir: string): void {
  if (existsSync(dir)) return;
  const parent = dirname(dir);
  if (parent !== dir) makeDirs(parent);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    // Made meanwhile by another process starting on the same dir: what it is is checked next.
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
}

/**
 * Every sandbox shows /usr, /lib…, a few /etc entries (/etc/ssl…) and the service's own Node read-only,
 * and a service that is not root runs its sandboxes as its own uid: a data dir in one of them would hand
 * every agent's programs the keys, the database and the other workspaces. Checked before anything is
 * created there.
 */
function refuseSandboxVisible(dataDir: string): void {
  const real = realPathOf(dataDir);
  const layout = systemLayout();
  const shown = [...layout.dirs, ...layout.etc, ...shippedDirs().map((dir) => dir.host)];
  const inside = shown.find((dir) => real === dir || real.startsWith(dir + sep));
  if (inside === undefined) return;
  throw new ConfigError(
    `AGENTOS_DATA_DIR ${dataDir} is inside ${inside}, which every sandbox shows to agents' programs: they could read the keys, the database and other agents' workspaces. Choose a directory of its own elsewhere (e.g. /var/lib/agentos)`,
  );
}

/** The real path of `path`, of its nearest existing ancestor when it does not exist yet. */
function realPathOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(realPathOf(parent), basename(path));
  }
}
