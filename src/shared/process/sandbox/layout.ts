import {
  chmodSync,
  cpSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { SystemLayout } from "./bwrap.ts";

const TOP = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
/**
 * What programs read from /etc: the loader's cache, alternatives (most of /usr/bin's links go through
 * it), certificates, names of the local host, time zone, MIME and magic tables, Python's own. Never
 * passwd/shadow/group (the sandbox gets its own), nor anything with credentials.
 */
const ETC = [
  "alternatives",
  "ca-certificates",
  "ca-certificates.conf",
  "ssl",
  "hosts",
  "host.conf",
  "nsswitch.conf",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "localtime",
  "timezone",
  "mime.types",
  "magic",
  "magic.mime",
  "protocols",
  "services",
  "os-release",
  "debian_version",
];

function kind(path: string): "dir" | "link" | "none" {
  try {
    const info = lstatSync(path);
    if (info.isSymbolicLink()) return "link";
    return info.isDirectory() ? "dir" : "none";
  } catch {
    return "none";
  }
}

/** This host's read-only system, as the sandbox will show it. */
export function systemLayout(): SystemLayout {
  const layout: SystemLayout = { dirs: [], links: [], etc: [] };
  for (const path of TOP) {
    const found = kind(path);
    if (found === "dir") layout.dirs.push(path);
    else if (found === "link") layout.links.push({ path, target: readlinkSync(path) });
  }
  let names: string[] = [];
  try {
    names = readdirSync("/etc");
  } catch {
    // No /etc to show.
  }
  const wanted = new Set(ETC);
  for (const name of names) {
    if (wanted.has(name) || /^python3(\.\d+)?$/.test(name)) layout.etc.push(`/etc/${name}`);
  }
  return layout;
}

let copied: { key: string; dir: string } | undefined;

/**
 * A copy of the `/etc` entries, bound as the sandbox's whole /etc: one mount instead of one per entry,
 * which is most of what starting a sandbox costs. Made once per process (copying takes a tenth of a
 * second; every service of the process shares it) in a private temporary directory (a 0700 parent; the
 * copy itself 0755, as /etc is), removed at exit. Links are copied as links (they point into /usr),
 * private key directories and whatever not everyone may read are left out, and passwd and group are
 * placeholders each sandbox covers with its own.
 */
export function etcCopy(entries: readonly string[]): string {
  const key = entries.join("\0");
  if (copied?.key === key) return copied.dir;
  removeStaleCopies();
  const parent = mkdtempSync(join(tmpdir(), `agentos-etc-${process.pid}-`));
  process.once("exit", () => rmSync(parent, { recursive: true, force: true }));
  const dir = join(parent, "etc");
  mkdirSync(dir, { mode: 0o755 });
  chmodSync(dir, 0o755);
  for (const entry of entries) {
    cpSync(entry, join(dir, basename(entry)), {
      recursive: true,
      verbatimSymlinks: true,
      filter: (source) => basename(source) !== "private" && everyoneMayRead(source),
    });
  }
  for (const name of ["passwd", "group"]) writeFileSync(join(dir, name), "", { mode: 0o644 });
  copied = { key, dir };
  return dir;
}

/**
 * Whether everyone may read `path` (enter it, for a directory): what a sandbox is meant to see of /etc.
 * Anything else there is someone's secret (a key the operator put beside the certificates, a data dir
 * under /etc/ssl), and a service that is not root runs its sandboxes as its own uid, which could read
 * its own 0600 files in the copy. Links are kept as links (they point into /usr, or nowhere inside).
 */
function everyoneMayRead(path: string): boolean {
  let info: ReturnType<typeof lstatSync>;
  try {
    info = lstatSync(path);
  } catch {
    return false;
  }
  if (info.isSymbolicLink()) return true;
  const wanted = info.isDirectory() ? 0o005 : 0o004;
  return (info.mode & wanted) === wanted;
}

/** Copies left by processes that died without exiting (kill -9): their pid is in the name. */
function removeStaleCopies(): void {
  let names: string[] = [];
  try {
    names = readdirSync(tmpdir());
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^agentos-etc-(\d+)-/.exec(name)?.[1]);
    if (!pid || pid === process.pid || alive(pid)) continue;
    rmSync(join(tmpdir(), name), { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
