import { chmodSync, mkdirSync, realpathSync, statSync } from "node:fs";
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
  refuseSandboxVisible(dataDir);
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
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
  chmodSync(dataDir, 0o700);
  warn(
    `AGENTOS_DATA_DIR ${dataDir} was open to other users (mode ${mode.toString(8).padStart(4, "0")}); permissions tightened to 0700`,
  );
}

/**
 * Every sandbox shows /usr, /lib… and the service's own Node read-only, and a service that is not root
 * runs its sandboxes as its own uid: a data dir in one of them would hand every agent's programs the
 * keys, the database and the other workspaces. Checked before anything is created there.
 */
function refuseSandboxVisible(dataDir: string): void {
  const real = realPathOf(dataDir);
  const shown = [...systemLayout().dirs, ...shippedDirs().map((dir) => dir.host)];
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
