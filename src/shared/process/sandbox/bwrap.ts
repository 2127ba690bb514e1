/**
 * bubblewrap's argument list for one confined run, as a pure function of what it is given: which
 * system paths exist on this host, the descriptors the launcher passes, and the command. Nothing here
 * touches the file system, so what a sandbox can see is read off this one function.
 */

/** Where the sandbox sees things. */
export const INSIDE = {
  workspace: "/workspace",
  node: "/opt/agentos/node",
  modules: "/opt/agentos/node_modules",
  relay: "/opt/agentos/egress-relay.mjs",
  run: "/run/agentos",
} as const;

/** The uid a sandbox of a non-root service shows its programs (mapped to the service's own). */
export const SANDBOX_UID = 1000;
export const RELAY_PORT = 3128;

/** How this host lays out the read-only system (found once by `systemLayout`). */
export interface SystemLayout {
  /** Directories bound read-only at the same path (`/usr`, a real `/lib64`…). */
  dirs: string[];
  /** Links recreated as they are (`/bin -> usr/bin` on merged-/usr systems). */
  links: Array<{ path: string; target: string }>;
  /** The few `/etc` entries programs need (present ones only). */
  etc: string[];
}

/** Descriptor numbers in the child, as the launcher laid them out. */
export interface Descriptors {
  workspace: number;
  passwd: number;
  group: number;
  seccomp?: number;
  /** The copy of the system's /etc entries (copyEtc), bound as /etc; without it each entry is bound. */
  etc?: number;
  /** Directories the service ships (its Node, its TypeScript), bound read-only where each says. */
  shipped: Array<{ fd: number; inside: string }>;
  /** More writable directories (a snapshot being made), bound where each says. */
  binds?: Array<{ fd: number; inside: string }>;
  egress?: number;
  relay?: number;
  /** A pipe the sandbox waits on before it starts the program (while its run's group is joined). */
  block?: number;
}

/**
 * Who the program runs as. A root service starts bubblewrap as root (so it can bind a workspace below
 * directories only root may enter) and `setpriv` drops to the workspace's own uid, with no capability
 * left and no way to gain one, before the program starts. Any other service runs bubblewrap
 * unprivileged, in a user namespace of its own that may not make more.
 */
export type Identity = { kind: "root"; uid: number; setpriv: string } | { kind: "user" };

export interface BwrapPlan {
  identity: Identity;
  layout: SystemLayout;
  fds: Descriptors;
  tmpBytes: number;
  /** Working directory inside (under /workspace). */
  cwd: string;
  command: string[];
}

/** The arguments after `bwrap`. */
export function bwrapArgs(plan: BwrapPlan): string[] {
  const { layout, fds, identity } = plan;
  const args =
    identity.kind === "user"
      ? ["--unshare-user", "--uid", String(SANDBOX_UID), "--gid", String(SANDBOX_UID), "--disable-userns"]
      : [];
  // Its own processes only: pid 1 of the namespace is bubblewrap's init as root (it keeps the signal
  // that kills it with the run; the program, once it changed uid, would not), the program itself in a
  // user namespace. When pid 1 ends, the kernel ends everything the program started.
  args.push("--unshare-pid");
  if (identity.kind === "user") args.push("--as-pid-1");
  args.push(
    // No network (not even the host's loopback), its own IPC, hostname and cgroup view.
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--hostname",
    "sandbox",
    "--die-with-parent",
    "--new-session",
  );
  // Directories bubblewrap makes for the binds below would be root's alone (0700): everyone may enter.
  const binds = fds.binds ?? [];
  const bound = [...fds.shipped, ...binds].map(({ inside }) => inside);
  for (const dir of parentDirs(["/etc/passwd", "/run/agentos", ...bound])) {
    args.push("--perms", "0755", "--dir", dir);
  }
  for (const dir of layout.dirs) args.push("--ro-bind", dir, dir);
  for (const { path, target } of layout.links) args.push("--symlink", target, path);
  if (fds.etc !== undefined) args.push("--ro-bind-fd", String(fds.etc), "/etc");
  else for (const entry of layout.etc) args.push("--ro-bind", entry, entry);
  args.push("--perms", "0644", "--ro-bind-data", String(fds.passwd), "/etc/passwd");
  args.push("--perms", "0644", "--ro-bind-data", String(fds.group), "/etc/group");
  args.push("--proc", "/proc", "--dev", "/dev");
  args.push("--perms", "1777", "--size", String(plan.tmpBytes), "--tmpfs", "/tmp");
  args.push("--bind-fd", String(fds.workspace), INSIDE.workspace);
  for (const { fd, inside } of fds.shipped) args.push("--ro-bind-fd", String(fd), inside);
  for (const { fd, inside } of binds) args.push("--bind-fd", String(fd), inside);
  if (fds.egress !== undefined) args.push("--ro-bind-fd", String(fds.egress), INSIDE.run);
  if (fds.relay !== undefined)
    args.push("--perms", "0644", "--ro-bind-data", String(fds.relay), INSIDE.relay);
  if (fds.seccomp !== undefined) args.push("--seccomp", String(fds.seccomp));
  if (fds.block !== undefined) args.push("--block-fd", String(fds.block));
  const drop =
    identity.kind === "root"
      ? [
          identity.setpriv,
          `--reuid=${identity.uid}`,
          `--regid=${identity.uid}`,
          "--clear-groups",
          "--inh-caps=-all",
          "--bounding-set=-all",
          "--no-new-privs",
          "--",
        ]
      : [];
  args.push("--chdir", plan.cwd, "--", ...drop, ...plan.command);
  return args;
}

/** Every ancestor directory of `paths` (not `/`), parents first. */
function parentDirs(paths: string[]): string[] {
  const dirs = new Set<string>();
  for (const path of paths) {
    const parts = path.split("/").filter(Boolean);
    for (let length = 1; length < parts.length; length++) dirs.add(`/${parts.slice(0, length).join("/")}`);
  }
  return [...dirs].sort((a, b) => a.split("/").length - b.split("/").length);
}

/** A host path as the sandbox sees it: inside the workspace it moves under /workspace, else unchanged. */
export function insidePath(workspace: string, hostPath: string): string {
  if (hostPath === workspace) return INSIDE.workspace;
  if (hostPath.startsWith(`${workspace}/`))
    return `${INSIDE.workspace}/${hostPath.slice(workspace.length + 1)}`;
  return hostPath;
}

/** The sandbox's /etc/passwd and /etc/group: root, the program's own user `agent`, and nobody. */
export function accounts(uid: number): { passwd: string; group: string } {
  return {
    passwd: `root:x:0:0:root:/nonexistent:/usr/sbin/nologin\nagent:x:${uid}:${uid}:agent:${INSIDE.workspace}:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
    group: `root:x:0:\nagent:x:${uid}:\nnogroup:x:65534:\n`,
  };
}
