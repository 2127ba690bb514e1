import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  accounts,
  type BwrapPlan,
  bwrapArgs,
  type Descriptors,
  type Identity,
  INSIDE,
  insidePath,
  type SystemLayout,
} from "../../../../src/shared/process/sandbox/bwrap.ts";
import { systemLayout } from "../../../../src/shared/process/sandbox/layout.ts";

/** How many values each bubblewrap option takes (the ones a sandbox could use; others fail the parse). */
const ARITY: Record<string, number> = {
  "--unshare-user": 0,
  "--unshare-pid": 0,
  "--unshare-net": 0,
  "--unshare-ipc": 0,
  "--unshare-uts": 0,
  "--unshare-cgroup-try": 0,
  "--unshare-all": 0,
  "--share-net": 0,
  "--disable-userns": 0,
  "--as-pid-1": 0,
  "--die-with-parent": 0,
  "--new-session": 0,
  "--uid": 1,
  "--gid": 1,
  "--hostname": 1,
  "--perms": 1,
  "--size": 1,
  "--dir": 1,
  "--proc": 1,
  "--dev": 1,
  "--tmpfs": 1,
  "--seccomp": 1,
  "--chdir": 1,
  "--cap-add": 1,
  "--ro-bind": 2,
  "--ro-bind-try": 2,
  "--bind": 2,
  "--bind-try": 2,
  "--dev-bind": 2,
  "--dev-bind-try": 2,
  "--symlink": 2,
  "--ro-bind-data": 2,
  "--bind-data": 2,
  "--file": 2,
  "--bind-fd": 2,
  "--ro-bind-fd": 2,
};
/** Options that only modify the next operation. */
const MODIFIERS = new Set(["--perms", "--size"]);
/** Operations that place something at a path inside (the last value). */
const PLACES = new Set([
  "--dir",
  "--proc",
  "--dev",
  "--tmpfs",
  "--ro-bind",
  "--ro-bind-try",
  "--bind",
  "--bind-try",
  "--dev-bind",
  "--dev-bind-try",
  "--symlink",
  "--ro-bind-data",
  "--bind-data",
  "--file",
  "--bind-fd",
  "--ro-bind-fd",
]);
const WRITABLE_BINDS = new Set([
  "--bind",
  "--bind-try",
  "--dev-bind",
  "--dev-bind-try",
  "--bind-fd",
  "--bind-data",
]);

interface Operation {
  option: string;
  values: string[];
  perms?: string;
  size?: string;
  /** Where inside it places something, for operations that do. */
  dest?: string;
}

/** The options before `--` as operations (with their --perms/--size), and the command after it. */
function parse(args: string[]): { operations: Operation[]; command: string[] } {
  const operations: Operation[] = [];
  let pending: { perms?: string; size?: string } = {};
  let index = 0;
  while (index < args.length) {
    const option = args[index] as string;
    if (option === "--") return { operations, command: args.slice(index + 1) };
    const arity = ARITY[option];
    if (arity === undefined) throw new Error(`unknown bwrap option ${option} at ${index}`);
    const values = args.slice(index + 1, index + 1 + arity);
    expect(values.length).toBe(arity);
    index += 1 + arity;
    if (MODIFIERS.has(option)) {
      pending = { ...pending, [option.slice(2)]: values[0] };
      continue;
    }
    operations.push({ option, values, ...pending, ...(PLACES.has(option) ? { dest: values.at(-1) } : {}) });
    pending = {};
  }
  throw new Error("no -- before the command");
}

const layout: SystemLayout = {
  dirs: ["/usr", "/lib64"],
  links: [
    { path: "/bin", target: "usr/bin" },
    { path: "/lib", target: "usr/lib" },
  ],
  etc: ["/etc/ld.so.cache", "/etc/ssl", "/etc/hosts", "/etc/python3.12"],
};

const fullFds: Descriptors = {
  workspace: 3,
  passwd: 4,
  group: 5,
  seccomp: 6,
  shipped: [
    { fd: 7, inside: INSIDE.node },
    { fd: 8, inside: `${INSIDE.modules}/typescript` },
    { fd: 9, inside: `${INSIDE.modules}/@typescript/typescript-linux-x64` },
  ],
  egress: 10,
  relay: 11,
};

const ROOT: Identity = { kind: "root", uid: 0x70001234, setpriv: "/usr/bin/setpriv" };
const USER: Identity = { kind: "user" };
const COMMAND = ["/bin/sh", "-c", "echo hi -- there", "--", "--bind"];

function plan(identity: Identity, overrides: Partial<BwrapPlan> = {}): BwrapPlan {
  return {
    identity,
    layout,
    fds: fullFds,
    tmpBytes: 512 * 1024 * 1024,
    cwd: `${INSIDE.workspace}/src`,
    command: COMMAND,
    ...overrides,
  };
}

const identities = [
  ["root", ROOT],
  ["user", USER],
] as const;

describe.each(identities)("bwrapArgs for a %s service", (_kind, identity) => {
  const args = bwrapArgs(plan(identity));
  const { operations, command } = parse(args);
  const options = operations.map(({ option }) => option);

  it("uses only options this test knows, and puts the command after --", () => {
    expect(command.slice(-COMMAND.length)).toEqual(COMMAND);
  });

  it("unshares pid, network, IPC and hostname, dies with its parent, in a new session", () => {
    for (const option of [
      "--unshare-pid",
      "--unshare-net",
      "--unshare-ipc",
      "--unshare-uts",
      "--die-with-parent",
      "--new-session",
    ]) {
      expect(options.filter((found) => found === option)).toHaveLength(1);
    }
    expect(options).not.toContain("--share-net");
    expect(options).not.toContain("--cap-add");
  });

  it("binds read-only exactly the layout's directories and /etc entries", () => {
    const hostSources = operations
      .filter(({ option }) => option === "--ro-bind" || option === "--ro-bind-try")
      .map(({ values }) => values);
    expect(hostSources).toEqual([...layout.dirs, ...layout.etc].map((path) => [path, path]));
    expect(operations.filter(({ option }) => option === "--symlink").map(({ values }) => values)).toEqual(
      layout.links.map(({ path, target }) => [target, path]),
    );
  });

  it("never shows secrets of the host", () => {
    for (const secret of ["/etc/shadow", "/etc/gshadow", "/root", "/home", "/data", "/var", "/proc/1"]) {
      for (const value of operations.flatMap(({ values }) => values)) {
        expect(value === secret || value.startsWith(`${secret}/`), `${value} under ${secret}`).toBe(false);
      }
    }
  });

  it("makes the workspace (by descriptor) its only writable bind", () => {
    const writable = operations.filter(({ option }) => WRITABLE_BINDS.has(option));
    expect(writable).toEqual([
      { option: "--bind-fd", values: ["3", INSIDE.workspace], dest: INSIDE.workspace },
    ]);
  });

  it("binds the shipped directories, the egress socket directory and the relay read-only by descriptor", () => {
    const byFd = operations.filter(({ option }) => option === "--ro-bind-fd").map(({ values }) => values);
    expect(byFd).toEqual([
      ["7", INSIDE.node],
      ["8", `${INSIDE.modules}/typescript`],
      ["9", `${INSIDE.modules}/@typescript/typescript-linux-x64`],
      ["10", INSIDE.run],
    ]);
    const data = operations.filter(({ option }) => option === "--ro-bind-data");
    expect(data.map(({ values, perms }) => [...values, perms])).toEqual([
      ["4", "/etc/passwd", "0644"],
      ["5", "/etc/group", "0644"],
      ["11", INSIDE.relay, "0644"],
    ]);
  });

  it("gives a private /tmp everyone may write to, of the planned size", () => {
    const tmp = operations.filter(({ option }) => option === "--tmpfs");
    expect(tmp).toEqual([
      { option: "--tmpfs", values: ["/tmp"], perms: "1777", size: String(512 * 1024 * 1024), dest: "/tmp" },
    ]);
    expect(args.join(" ")).toContain(`--perms 1777 --size ${512 * 1024 * 1024} --tmpfs /tmp`);
  });

  it("mounts a fresh /proc and /dev", () => {
    expect(operations.filter(({ option }) => option === "--proc").map(({ dest }) => dest)).toEqual(["/proc"]);
    expect(operations.filter(({ option }) => option === "--dev").map(({ dest }) => dest)).toEqual(["/dev"]);
  });

  it("makes every directory (0755) before anything placed inside it", () => {
    const dirs = operations.filter(({ option }) => option === "--dir");
    expect(dirs.length).toBeGreaterThan(0);
    for (const dir of dirs) expect(dir.perms).toBe("0755");
    operations.forEach((operation, index) => {
      for (const dir of dirs) {
        const dirPath = dir.dest as string;
        if (operation.dest?.startsWith(`${dirPath}/`)) {
          expect(operations.indexOf(dir), `--dir ${dirPath} before ${operation.dest}`).toBeLessThan(index);
        }
      }
    });
    // The directories the descriptors land in exist, so bubblewrap need not make them itself.
    const made = new Set(dirs.map(({ dest }) => dest));
    for (const parent of ["/etc", "/run", "/opt", "/opt/agentos", `${INSIDE.modules}/@typescript`]) {
      expect(made.has(parent), parent).toBe(true);
    }
  });

  it("applies the seccomp filter from its descriptor", () => {
    expect(operations.filter(({ option }) => option === "--seccomp")).toEqual([
      { option: "--seccomp", values: ["6"] },
    ]);
  });

  it("starts in the planned directory", () => {
    expect(operations.filter(({ option }) => option === "--chdir").map(({ values }) => values)).toEqual([
      [`${INSIDE.workspace}/src`],
    ]);
  });
});

describe("bwrapArgs for a non-root service", () => {
  const args = bwrapArgs(plan(USER));
  const { operations, command } = parse(args);

  it("maps the service to uid and gid 1000 in a user namespace that may not make another", () => {
    expect(args.slice(0, 6)).toEqual([
      "--unshare-user",
      "--uid",
      "1000",
      "--gid",
      "1000",
      "--disable-userns",
    ]);
    expect(operations.map(({ option }) => option)).toContain("--as-pid-1");
  });

  it("runs the command itself, with no change of identity", () => {
    expect(command).toEqual(COMMAND);
    expect(command).not.toContain("/usr/bin/setpriv");
  });
});

describe("bwrapArgs for a root service", () => {
  const args = bwrapArgs(plan(ROOT));
  const { operations, command } = parse(args);
  const options = operations.map(({ option }) => option);

  it("makes no user namespace and keeps bubblewrap's init as pid 1", () => {
    for (const option of ["--unshare-user", "--uid", "--gid", "--disable-userns", "--as-pid-1"]) {
      expect(options).not.toContain(option);
    }
  });

  it("ends with setpriv dropping to the workspace's uid, without groups or capabilities, then the command", () => {
    const uid = String(ROOT.kind === "root" ? ROOT.uid : 0);
    expect(command).toEqual([
      "/usr/bin/setpriv",
      `--reuid=${uid}`,
      `--regid=${uid}`,
      "--clear-groups",
      "--inh-caps=-all",
      "--bounding-set=-all",
      "--no-new-privs",
      "--",
      ...COMMAND,
    ]);
    expect(args.slice(-(COMMAND.length + 9))).toEqual(["--", ...command]);
  });
});

describe("bwrapArgs with fewer descriptors", () => {
  const minimal: Descriptors = { workspace: 3, passwd: 4, group: 5, shipped: [] };

  it.each(identities)(
    "for a %s service, has no --seccomp, relay or egress bind when none is given",
    (_kind, identity) => {
      const { operations } = parse(bwrapArgs(plan(identity, { fds: minimal })));
      const options = operations.map(({ option }) => option);
      expect(options).not.toContain("--seccomp");
      expect(options).not.toContain("--ro-bind-fd");
      expect(operations.map(({ dest }) => dest)).not.toContain(INSIDE.relay);
      expect(operations.map(({ dest }) => dest)).not.toContain(INSIDE.run);
      expect(operations.filter(({ option }) => WRITABLE_BINDS.has(option))).toHaveLength(1);
    },
  );

  it("puts --seccomp before the command whichever descriptor carries it", () => {
    fc.assert(
      fc.property(fc.integer({ min: 3, max: 1000 }), (fd) => {
        const args = bwrapArgs(plan(USER, { fds: { ...minimal, seccomp: fd } }));
        const at = args.indexOf("--seccomp");
        expect(args[at + 1]).toBe(String(fd));
        expect(at).toBeLessThan(args.indexOf("--"));
      }),
    );
  });

  it("binds nothing but what the layout lists, whatever it lists", () => {
    const path = fc
      .array(fc.stringMatching(/^[a-z0-9._-]{1,8}$/), { minLength: 1, maxLength: 3 })
      .map((parts) => `/${parts.join("/")}`);
    fc.assert(
      fc.property(
        fc.uniqueArray(path, { maxLength: 5 }),
        fc.uniqueArray(path, { maxLength: 5 }),
        (dirs, etc) => {
          const { operations } = parse(bwrapArgs(plan(USER, { layout: { dirs, etc, links: [] } })));
          const sources = operations
            .filter(({ option }) => option === "--ro-bind")
            .map(({ values }) => values[0]);
          expect(sources).toEqual([...dirs, ...etc]);
        },
      ),
    );
  });
});

describe("the host's system layout", () => {
  it("lists only system directories and harmless /etc entries", () => {
    const found = systemLayout();
    const everything = [...found.dirs, ...found.links.map(({ path }) => path), ...found.etc];
    for (const path of everything) {
      expect(["/etc/passwd", "/etc/group", "/etc/shadow", "/etc/gshadow", "/etc/sudoers"]).not.toContain(
        path,
      );
      expect(path.startsWith("/root") || path.startsWith("/home") || path.startsWith("/var")).toBe(false);
    }
    for (const dir of found.dirs)
      expect(["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"]).toContain(dir);
    for (const entry of found.etc) expect(entry).toMatch(/^\/etc\/[^/]+$/);
  });
});

describe("insidePath", () => {
  const segment = fc.stringMatching(/^[^/\0]{1,12}$/).filter((part) => part !== "." && part !== "..");
  const absolute = fc.array(segment, { minLength: 1, maxLength: 5 }).map((parts) => `/${parts.join("/")}`);
  const relative = fc.array(segment, { minLength: 1, maxLength: 5 }).map((parts) => parts.join("/"));

  it("moves a path inside the workspace under /workspace", () => {
    fc.assert(
      fc.property(absolute, relative, (workspace, rel) => {
        expect(insidePath(workspace, `${workspace}/${rel}`)).toBe(`${INSIDE.workspace}/${rel}`);
      }),
    );
  });

  it("maps the workspace itself to /workspace", () => {
    fc.assert(
      fc.property(absolute, (workspace) => {
        expect(insidePath(workspace, workspace)).toBe(INSIDE.workspace);
      }),
    );
  });

  it("leaves a path that merely shares the workspace's prefix unchanged", () => {
    expect(insidePath("/data/ws1", "/data/ws10/x")).toBe("/data/ws10/x");
    expect(insidePath("/data/ws1", "/data/ws1-other")).toBe("/data/ws1-other");
    fc.assert(
      fc.property(absolute, segment, fc.option(relative), (workspace, suffix, rest) => {
        const sibling = `${workspace}${suffix}${rest === null ? "" : `/${rest}`}`;
        expect(insidePath(workspace, sibling)).toBe(sibling);
      }),
    );
  });

  it("leaves a path outside the workspace unchanged", () => {
    expect(insidePath("/data/workspaces/a", "/usr/bin/node")).toBe("/usr/bin/node");
    expect(insidePath("/data/workspaces/a", "/data/workspaces")).toBe("/data/workspaces");
    fc.assert(
      fc.property(absolute, absolute, (workspace, other) => {
        fc.pre(other !== workspace && !other.startsWith(`${workspace}/`));
        expect(insidePath(workspace, other)).toBe(other);
      }),
    );
  });
});

describe("accounts", () => {
  it("names the uid as agent in passwd and group, beside root and nobody", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 0x7fffffff }), (uid) => {
        const { passwd, group } = accounts(uid);
        const users = passwd
          .trimEnd()
          .split("\n")
          .map((line) => line.split(":"));
        const groups = group
          .trimEnd()
          .split("\n")
          .map((line) => line.split(":"));
        for (const fields of users) expect(fields).toHaveLength(7);
        for (const fields of groups) expect(fields).toHaveLength(4);
        expect(users.map(([name]) => name)).toEqual(["root", "agent", "nobody"]);
        expect(users[1]).toEqual([
          "agent",
          "x",
          String(uid),
          String(uid),
          "agent",
          INSIDE.workspace,
          "/bin/sh",
        ]);
        expect(groups.find(([name]) => name === "agent")).toEqual(["agent", "x", String(uid), ""]);
        expect(users[0]?.slice(2, 4)).toEqual(["0", "0"]);
        expect(passwd.endsWith("\n") && group.endsWith("\n")).toBe(true);
      }),
    );
  });

  it("shows the sandbox uid 1000 when the service is not root", () => {
    expect(accounts(1000).passwd).toContain("agent:x:1000:1000:");
    expect(accounts(1000).group).toContain("agent:x:1000:");
  });
});
