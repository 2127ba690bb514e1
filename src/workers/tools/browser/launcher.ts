import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AppError } from "../../../shared/errors.ts";
import { runsAsRoot } from "../../../shared/process/sandbox/owner.ts";
import { sandboxSettings } from "../../../shared/process/sandbox/settings.ts";

/**
 * The uid and gid Chromium runs as when the service is root: one of its own, never root, never a user of
 * the host. It sits just above the workspaces' uids (0x70000000…0x70ffffff, see owner.ts), outside
 * systemd's container ranges (…0x6fffffff), and has no passwd entry: the browser needs none, its HOME
 * is the profile directory Playwright makes for each launch.
 */
export const BROWSER_UID = 0x71000000;
const SETPRIV = ["/usr/bin/setpriv", "/bin/setpriv"];

/** How to start Chromium: the program Playwright spawns, whether Chromium's own sandbox is on, its environment. */
export interface ChromiumLaunch {
  executablePath: string;
  chromiumSandbox: boolean;
  env?: Record<string, string>;
  /** The uid Chromium runs as when not the service's own. */
  uid?: number;
  /** Removes what the launch needed only until Chromium started. */
  done: () => Promise<void>;
}

const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

/**
 * The wrapper Playwright spawns instead of Chromium when the service is root. Playwright passes a fresh
 * profile (`--user-data-dir=`, a root-owned 0700 mkdtemp) and the debugging pipe on fds 3 and 4, which
 * survive both execs. The wrapper gives the profile to the browser uid, makes it the browser's HOME, and
 * execs Chromium as that uid with no groups, no capabilities and no way to gain any (no_new_privs):
 * Chromium then sandboxes its renderers itself, in user namespaces.
 */
function wrapper(setpriv: string, chromium: string): string {
  const id = `${BROWSER_UID}`;
  return `#!/bin/sh
# AgentOS: runs Chromium as uid ${id}, with Chromium's own sandbox.
set -eu
profile=
for arg in "$@"; do
  case "$arg" in --user-data-dir=*) profile="\${arg#--user-data-dir=}" ;; esac
done
if [ -z "$profile" ] || [ -L "$profile" ] || [ ! -d "$profile" ]; then
  echo "agentos: no --user-data-dir directory to give the browser" >&2
  exit 1
fi
chown -R -- ${id}:${id} "$profile"
HOME="$profile" TMPDIR="$profile"
export HOME TMPDIR
exec ${quote(setpriv)} --reuid=${id} --regid=${id} --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- ${quote(chromium)} "$@"
`;
}

/**
 * How this process starts Chromium. Root: as BROWSER_UID through the wrapper, sandbox on, with only
 * the environment it needs (none of the service's secrets). Another user: Chromium directly, sandbox on.
 * AGENTOS_SANDBOX=off (the operator's explicit opt-out): Chromium directly with --no-sandbox, as before.
 */
export async function chromiumLaunch(chromium: string): Promise<ChromiumLaunch> {
  const done = async () => {};
  if (!sandboxSettings(process.env).enabled)
    return { executablePath: chromium, chromiumSandbox: false, done };
  if (!runsAsRoot()) return { executablePath: chromium, chromiumSandbox: true, done };
  const setpriv = SETPRIV.find((path) => existsSync(path));
  if (!setpriv)
    throw new AppError(
      "unavailable",
      "The browser tools run Chromium as an unprivileged user and need setpriv for it: install util-linux (apt-get install -y util-linux)",
    );
  // A directory only root can enter: the browser's uid can neither read nor replace the wrapper.
  const dir = await mkdtemp(join(tmpdir(), "agentos-chromium-"));
  const executablePath = join(dir, "chromium");
  await writeFile(executablePath, wrapper(setpriv, chromium), { mode: 0o755, flag: "wx" });
  await chmod(executablePath, 0o755);
  const env: Record<string, string> = { PATH: "/usr/local/bin:/usr/bin:/bin" };
  for (const name of ["LANG", "LC_ALL", "TZ"]) {
    const value = process.env[name];
    if (value) env[name] = value;
  }
  return {
    executablePath,
    chromiumSandbox: true,
    env,
    uid: BROWSER_UID,
    done: () => rm(dir, { recursive: true, force: true }),
  };
}

/** The error for a Chromium that did not start: what to enable when its sandbox could not be set up. */
export function launchError(error: Error, chromium: string, launch: ChromiumLaunch): AppError {
  const message = error.message ?? "";
  if (/sandboxing failed|No usable sandbox/i.test(message))
    return new AppError(
      "unavailable",
      "Chromium could not set up its sandbox: it needs unprivileged user namespaces. Enable them (sysctl user.max_user_namespaces above 0; kernel.unprivileged_userns_clone=1 where it exists; on Ubuntu 24.04 sysctl kernel.apparmor_restrict_unprivileged_userns=0; in a container, allow unshare/clone with user namespaces in its seccomp profile)",
    );
  const who =
    launch.uid === undefined
      ? ""
      : ` as uid ${launch.uid} (it must be able to run ${chromium} and reach its profile in ${tmpdir()})`;
  return new AppError("unavailable", `Chromium did not start${who}: ${message.split("\n")[0]}`);
}
