import { existsSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isBlockedAddress } from "../../../src/shared/net/ssrf.ts";
import { processesOf, workspaceOwner } from "../../../src/shared/process/sandbox/owner.ts";
import { workspaceDir } from "../../../src/workers/tools/sandbox.ts";
import { call, createAgent, newRealm, realmKey } from "../../helpers/control-plane.ts";
import { toolsServer } from "./setup.ts";

/*
 * A hostile tenant's agent, through the message route with a realm key, has the model run code with
 * tool::shell_exec (python3 -c …). Each program tries one way out and prints what it got; every one
 * must fail. Network attempts first check that the sandbox has no route at all, so no packet can leave
 * this machine even if the sandbox were broken.
 */
const QUOTA_MB = 16;
const env = toolsServer({
  // The SSRF rule as in production (no private network), and a small quota to run into.
  AGENTOS_ALLOW_PRIVATE_NETWORK: "0",
  AGENTOS_WORKSPACE_QUOTA_MB: String(QUOTA_MB),
  AGENTOS_ESCAPE_CANARY: "canary-7f3a9c",
  // The one host a granted agent may reach in these tests: an address of this machine's loopback range
  // that the SSRF rule exempts, standing in for a public host.
  AGENTOS_ALLOWED_ADDRESSES: "127.0.0.2",
});

let upstream: Server | undefined;
let upstreamPort = 0;
beforeAll(async () => {
  upstream = createServer((req, res) => res.end(`upstream saw ${req.method} ${req.url}`));
  await new Promise<void>((resolve) => upstream?.listen(0, "127.0.0.2", resolve));
  upstreamPort = (upstream.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve())));

interface Tenant {
  agentId: string;
  realmId: string;
  key: string;
}

async function tenant(fields: Record<string, unknown> = {}): Promise<Tenant> {
  const realmId = await newRealm(env.server);
  const agentId = await createAgent(env.server, realmId, { toolProfile: "full", ...fields });
  return { agentId, realmId, key: await realmKey(env.server, realmId) };
}

interface Ran {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Has the agent's model call shell_exec with `args` and answers what the tool gave back. */
async function shell(who: Tenant, command: string, args: string[], timeoutMs = 20_000): Promise<Ran> {
  env.fake.reply(
    { toolCalls: [{ name: "tool__shell_exec", arguments: { command, args, timeoutMs } }] },
    { content: "done" },
  );
  const reply = await call(
    env.server,
    "POST",
    `/api/agents/${who.agentId}/message`,
    { message: "go" },
    who.key,
  );
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  const last = env.fake.requests.at(-1) as
    | { messages?: Array<{ role: string; content: string }> }
    | undefined;
  const messages = last?.messages ?? [];
  const answer = messages.filter((message) => message.role === "tool").at(-1);
  return JSON.parse(answer?.content ?? "{}") as Ran;
}

/** Runs a Python program in the agent's sandbox and parses the JSON it prints last. */
async function python(who: Tenant, program: string, timeoutMs?: number) {
  const ran = await shell(who, "python3", ["-c", program], timeoutMs);
  const last = ran.stdout.trim().split("\n").at(-1) ?? "";
  try {
    return { ...ran, result: JSON.parse(last) };
  } catch {
    throw new Error(`no JSON from the program: ${JSON.stringify(ran)}`);
  }
}

const TRY = `
import json, os, socket, subprocess, ctypes
out = {}
def attempt(name, fn):
    try:
        out[name] = ["ok", repr(fn())[:200]]
    except BaseException as e:
        out[name] = ["refused", type(e).__name__ + ": " + str(e)[:200]]
`;

const refused = (result: Record<string, [string, string]>) =>
  Object.fromEntries(Object.entries(result).map(([name, [verdict]]) => [name, verdict]));

describe("the sandbox, tried by a hostile tenant's own agent", () => {
  it("shows no process of the service, no service variable and none of the service's files", async () => {
    const who = await tenant();
    const other = await tenant();
    await env.tool("tool::file_write", { path: "secret.txt", content: "other tenant" }, other);
    const dataDir = realpathSync(env.server.dataDir);
    const otherWorkspace = workspaceDir(dataDir, other.agentId);
    const { result } = await python(
      who,
      `${TRY}
pids = [p for p in os.listdir("/proc") if p.isdigit()]
out["pids"] = len(pids)
out["cmdlines"] = [open(f"/proc/{p}/cmdline","rb").read().decode(errors="replace") for p in pids]
environs = []
for p in pids:
    try: environs.append(open(f"/proc/{p}/environ","rb").read().decode(errors="replace"))
    except Exception: pass
out["environs"] = environs
out["env"] = dict(os.environ)
attempt("service pid", lambda: os.listdir("/proc/${process.pid}"))
attempt("data dir", lambda: os.listdir(${JSON.stringify(dataDir)}))
attempt("database", lambda: open(${JSON.stringify(join(dataDir, "agentos.db"))},"rb").read(16))
attempt("other workspace", lambda: os.listdir(${JSON.stringify(otherWorkspace)}))
attempt("other file", lambda: open(${JSON.stringify(join(otherWorkspace, "secret.txt"))}).read())
attempt("root home", lambda: os.listdir("/root"))
attempt("home", lambda: os.listdir("/home"))
attempt("shadow", lambda: open("/etc/shadow").read())
attempt("sandbox source", lambda: os.listdir(${JSON.stringify(realpathSync("src"))}))
print(json.dumps(out))`,
    );
    expect(result.pids).toBeLessThanOrEqual(3);
    // pid 1 is bubblewrap's init, the other the program itself.
    expect(result.cmdlines.map((line: string) => line.split("\0")[0]).sort()).toEqual([
      "/usr/bin/bwrap",
      "/usr/bin/python3",
    ]);
    expect(JSON.stringify([result.environs, result.env])).not.toMatch(/canary-7f3a9c|AGENTOS_|_API_KEY/);
    expect(Object.keys(result.env).sort()).toEqual([
      "HOME",
      "LANG",
      "LOGNAME",
      "PATH",
      "PWD",
      "TMPDIR",
      "USER",
    ]);
    expect(
      refused({
        "service pid": result["service pid"],
        "data dir": result["data dir"],
        database: result.database,
        "other workspace": result["other workspace"],
        "other file": result["other file"],
        "root home": result["root home"],
        home: result.home,
        shadow: result.shadow,
        "sandbox source": result["sandbox source"],
      }),
    ).toEqual({
      "service pid": "refused",
      "data dir": "refused",
      database: "refused",
      "other workspace": "refused",
      "other file": "refused",
      "root home": "refused",
      home: "refused",
      shadow: "refused",
      "sandbox source": "refused",
    });
  });

  it("writes only in its workspace and a private /tmp, as a uid that is not root and cannot gain privileges", async () => {
    const who = await tenant();
    const canary = `agentos-escape-${who.agentId}`;
    const { result } = await python(
      who,
      `${TRY}
for path in ["/usr/local/x", "/etc/x", "/x", "/opt/agentos/x", "/run/x", "/proc/sys/kernel/hostname"]:
    attempt("write " + path, lambda: open(path, "w").write("x"))
attempt("tmp", lambda: open("/tmp/${canary}", "w").write("x"))
attempt("workspace", lambda: open("/workspace/mine.txt", "w").write("x"))
out["uid"] = os.getuid()
status = open("/proc/self/status").read()
out["status"] = {line.split(":")[0]: line.split(":")[1].strip() for line in status.splitlines() if line.split(":")[0] in ("CapEff", "CapPrm", "CapBnd", "NoNewPrivs", "Seccomp")}
out["remount"] = subprocess.run(["mount", "-o", "remount,rw", "/"], capture_output=True).returncode
out["unshare"] = subprocess.run(["unshare", "-r", "true"], capture_output=True).returncode
libc = ctypes.CDLL(None, use_errno=True)
out["unshare(CLONE_NEWUSER)"] = libc.unshare(0x10000000)
out["ptrace(ATTACH, 1)"] = libc.ptrace(16, 1, 0, 0)
print(json.dumps(out))`,
    );
    expect(
      Object.fromEntries(
        Object.entries(result as Record<string, [string, string]>)
          .filter(([name]) => name.startsWith("write "))
          .map(([name, [verdict]]) => [name, verdict]),
      ),
    ).toEqual({
      "write /usr/local/x": "refused",
      "write /etc/x": "refused",
      "write /x": "refused",
      "write /opt/agentos/x": "refused",
      "write /run/x": "refused",
      "write /proc/sys/kernel/hostname": "refused",
    });
    expect(result.tmp[0]).toBe("ok");
    expect(existsSync(`/tmp/${canary}`)).toBe(false);
    expect(result.workspace[0]).toBe("ok");
    expect(readFileSync(join(workspaceDir(env.server.dataDir, who.agentId), "mine.txt"), "utf8")).toBe("x");
    expect(result.uid).not.toBe(0);
    expect(result.status).toMatchObject({
      CapEff: "0000000000000000",
      CapPrm: "0000000000000000",
      NoNewPrivs: "1",
      Seccomp: "2",
    });
    expect(result.remount).not.toBe(0);
    expect(result.unshare).not.toBe(0);
    expect(result["unshare(CLONE_NEWUSER)"]).toBe(-1);
    expect(result["ptrace(ATTACH, 1)"]).toBe(-1);
  });

  it("has no network: not the service on loopback, not a private or metadata address, not the internet", async () => {
    const who = await tenant();
    const port = new URL(env.server.url).port;
    const { result } = await python(
      who,
      `${TRY}
routes = open("/proc/net/route").read().strip().splitlines()[1:]
out["routes"] = routes
def connect(host, port):
    s = socket.socket(); s.settimeout(2)
    try: s.connect((host, port)); return "connected"
    finally: s.close()
attempt("service", lambda: connect("127.0.0.1", ${port}))
if not routes:
    for host in ["10.0.0.1", "169.254.169.254", "192.0.2.1"]:
        attempt(host, lambda: connect(host, 80))
attempt("dns", lambda: socket.getaddrinfo("example.com", 80))
print(json.dumps(out))`,
    );
    expect(result.routes).toEqual([]);
    expect(refused(result)).toMatchObject({
      service: "refused",
      "10.0.0.1": "refused",
      "169.254.169.254": "refused",
      "192.0.2.1": "refused",
      dns: "refused",
    });
    expect(result["10.0.0.1"][1]).toMatch(/unreachable/i);
  });

  it("has no way past its network namespace: no vsock to the hypervisor, no io_uring to make one", async () => {
    const { result } = await python(
      await tenant(),
      `${TRY}
AF_VSOCK = 40
attempt("vsock", lambda: socket.socket(AF_VSOCK, socket.SOCK_STREAM).close())
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
out["io_uring_setup"] = [libc.syscall(425, 8, params), ctypes.get_errno()]
attempt("tcp socket", lambda: socket.socket().close())
print(json.dumps(out))`,
    );
    expect(result.vsock[0], JSON.stringify(result)).toBe("refused");
    expect(result.io_uring_setup[0]).toBe(-1);
    expect(result["tcp socket"][0]).toBe("ok");
  });

  it("contains a fork bomb and a huge allocation while the service keeps answering", async () => {
    const who = await tenant();
    const bomb = python(
      who,
      `${TRY}
import time
n = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(30); os._exit(0)
        n += 1
except OSError as e:
    out["stopped"] = [n, str(e)]
attempt("allocate 10 GB", lambda: len(bytearray(10 * 1024**3)))
print(json.dumps(out))`,
      15_000,
    );
    let slowest = 0;
    let done = false;
    void bomb.finally(() => (done = true)).catch(() => undefined);
    while (!done) {
      const started = performance.now();
      const health = await fetch(`${env.server.url}/healthz`);
      expect(health.status).toBe(200);
      slowest = Math.max(slowest, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const { result } = await bomb;
    expect(result.stopped[0]).toBeLessThan(1000);
    expect(result["allocate 10 GB"][0]).toBe("refused");
    expect(slowest).toBeLessThan(1000);
    expect(await env.tool("tool::process_list", {}, who)).toEqual({ processes: [] });
  });

  it("is what the kernel ends first when the machine runs out of memory, not the service", async () => {
    // Each process's memory is limited, not a run's: many of them can still exhaust the machine. The
    // kernel's OOM killer must then pick the sandbox's processes (children included), never the
    // service or the databases beside it.
    const { result } = await python(
      await tenant(),
      `${TRY}
out["self"] = open("/proc/self/oom_score_adj").read().strip()
out["child"] = subprocess.run(["cat", "/proc/self/oom_score_adj"], capture_output=True, text=True).stdout.strip()
with open("/proc/self/oom_score_adj", "w") as f:
    attempt("lower", lambda: f.write("0") and f.flush())
print(json.dumps(out))`,
    );
    expect(result.self).toBe("1000");
    expect(result.child).toBe("1000");
    // Only a setting made with CAP_SYS_RESOURCE holds against the program (else it may lower it again).
    const capabilities = /CapEff:\s*([0-9a-f]+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? "0";
    const CAP_SYS_RESOURCE = 24n;
    if ((BigInt(`0x${capabilities}`) >> CAP_SYS_RESOURCE) & 1n) expect(result.lower[0]).toBe("refused");
  });

  it("stops a runaway write at the workspace quota", async () => {
    const who = await tenant();
    const ran = await shell(
      who,
      "python3",
      [
        "-c",
        "import os\nos.makedirs('big', exist_ok=True)\ni = 0\nwhile True:\n    open(f'big/{i}', 'wb').write(os.urandom(1 << 20)); i += 1",
      ],
      60_000,
    );
    expect(ran.exitCode, JSON.stringify(ran)).not.toBe(0);
    expect(ran.stderr).toContain("over its quota");
    expect(ran.timedOut).toBe(false);
    // Measured twice a second or more often while it runs: stopped within a moment of passing the quota.
    const du = await shell(who, "du", ["-sm", "big"]);
    expect(Number.parseInt(du.stdout, 10), JSON.stringify(du)).toBeLessThan(QUOTA_MB + 256);
    // Over its quota a program may still delete, but not write.
    const blocked = await shell(who, "python3", ["-c", "with open('more', 'wb') as f: f.write(b'x' * 4096)"]);
    expect(blocked.exitCode, JSON.stringify([blocked, du])).not.toBe(0);
    expect(
      (await env.failure("tool::file_write", { path: "more.txt", content: "x" }, who)).message,
    ).toContain("over its quota");
    expect((await shell(who, "rm", ["-r", "big"])).exitCode).toBe(0);
    expect((await env.tool("tool::file_write", { path: "more.txt", content: "x" }, who)).bytes).toBe(1);
  });

  it("stops a program making empty files at the workspace quota: each takes an inode of the disk", async () => {
    const who = await tenant();
    // Empty files take no block but an inode each: without a charge, a quota of bytes lets one workspace
    // use up every inode of the disk (the service's database then cannot create a file).
    const ran = await shell(
      who,
      "python3",
      [
        "-c",
        // More than it could make before the quota's first look, however fast the disk: it must be stopped.
        "import os\nfor d in range(2000):\n    os.makedirs(f'many/{d}')\n    for i in range(1000): open(f'many/{d}/{i}', 'w').close()",
      ],
      60_000,
    );
    expect(ran.exitCode, JSON.stringify(ran)).not.toBe(0);
    expect(ran.stderr).toContain("over its quota");
    expect((await shell(who, "rm", ["-r", "many"])).exitCode).toBe(0);
  });

  it("a link a program plants to the data dir is refused by file_read and file_write", async () => {
    const who = await tenant();
    const dataDir = realpathSync(env.server.dataDir);
    const before = readFileSync(join(dataDir, "agentos.db"));
    await shell(who, "python3", [
      "-c",
      `import os\nos.symlink(${JSON.stringify(join(dataDir, "agentos.db"))}, "db")\nos.symlink(${JSON.stringify(dataDir)}, "data")`,
    ]);
    for (const path of ["db", "data/agentos.db"]) {
      expect((await env.failure("tool::file_read", { path }, who)).status).toBe(400);
      expect((await env.failure("tool::file_write", { path, content: "x" }, who)).status).toBe(400);
    }
    expect((await env.failure("tool::file_write", { path: "data/new.txt", content: "x" }, who)).status).toBe(
      400,
    );
    expect(existsSync(join(dataDir, "new.txt"))).toBe(false);
    // Listed as links, never followed.
    const listing = await env.tool<{ entries: Array<{ path: string; type: string }> }>(
      "tool::file_list",
      { recursive: true },
      who,
    );
    expect(listing.entries.map(({ path, type }) => `${path}:${type}`).sort()).toEqual([
      "data:symlink",
      "db:symlink",
    ]);
    expect((await env.failure("tool::file_list", { path: "data" }, who)).status).toBe(400);
    expect(readFileSync(join(dataDir, "agentos.db")).subarray(0, 16)).toEqual(before.subarray(0, 16));
  });

  it("a snapshot copies a planted link as a link, never what it points to", async () => {
    const who = await tenant();
    const dataDir = realpathSync(env.server.dataDir);
    await shell(who, "python3", [
      "-c",
      `import os\nos.symlink(${JSON.stringify(dataDir)}, "data")\nopen("mine.txt", "w").write("mine")`,
    ]);
    const { snapshot } = await env.tool<{ snapshot: { id: string } }>("tool::snapshot_create", {}, who);
    await env.tool("tool::file_write", { path: "mine.txt", content: "changed" }, who);
    await env.tool("tool::snapshot_restore", { snapshotId: snapshot.id }, who);
    const listing = await shell(who, "python3", [
      "-c",
      "import os, json\nprint(json.dumps([os.readlink('data'), open('mine.txt').read(), sorted(os.listdir('.'))]))",
    ]);
    expect(JSON.parse(listing.stdout)).toEqual([dataDir, "mine", ["data", "mine.txt"]]);
  });

  it("an agent deleted while its program runs takes the program with it before its files go", async () => {
    const who = await tenant();
    const root = workspaceDir(realpathSync(env.server.dataDir), who.agentId);
    const running = env.tool(
      "tool::shell_exec",
      { command: "sleep", args: ["300"], timeoutMs: 300_000 },
      who,
    );
    void running.catch(() => undefined);
    const owner = workspaceOwner(root);
    if (owner) {
      for (let i = 0; i < 100 && processesOf(owner.uid).length === 0; i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(processesOf(owner.uid).length).toBeGreaterThan(0);
    }
    const deleted = await call(env.server, "DELETE", `/api/agents/${who.agentId}`, undefined, who.key);
    expect(deleted.status).toBeLessThan(300);
    await running.catch(() => undefined);
    if (owner) expect(processesOf(owner.uid)).toEqual([]);
    expect(existsSync(root)).toBe(false);
  });

  it("with egress granted, cannot tie up the service's descriptors with connections to its proxy", async () => {
    // The service runs in this process: its open descriptors are ours.
    const open = () => readdirSync("/proc/self/fd").length;
    const before = open();
    let most = before;
    let done = false;
    const held = python(
      await tenant({ egress: {} }),
      `${TRY}
import time
held = []
for i in range(2000):
    s = socket.socket(socket.AF_UNIX)
    try: s.connect("/run/agentos/proxy.sock")
    except OSError: s.close(); continue
    held.append(s)
out["held"] = len(held)
time.sleep(3)
print(json.dumps(out))`,
    ).finally(() => (done = true));
    while (!done) {
      most = Math.max(most, open());
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await held;
    expect(most - before).toBeLessThan(600);
  });

  it("with egress granted, reaches an allowed host through the proxy and nothing else", async () => {
    const anyHost = await tenant({ egress: {} });
    const listed = await tenant({ egress: { allowDomains: ["127.0.0.2"] } });
    const port = new URL(env.server.url).port;
    const program = `${TRY}
import urllib.request, http.client
def get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as r: return [r.status, r.read().decode()]
    except urllib.error.HTTPError as e: return [e.code, e.read().decode()[:200]]
    except Exception as e: return ["refused", str(e)[:200]]
out["allowed"] = get("http://127.0.0.2:${upstreamPort}/hello")
out["service"] = get("http://127.0.0.1:${port}/healthz")
out["metadata"] = get("http://169.254.169.254/latest/meta-data/")
out["private"] = get("http://10.0.0.1/")
out["proxy"] = os.environ.get("HTTPS_PROXY")
def tunnel(host, port):
    c = http.client.HTTPConnection("127.0.0.1", 3128, timeout=5)
    c.set_tunnel(host, port)
    c.request("GET", "/tunnelled")
    return c.getresponse().read().decode()
attempt("tunnel allowed", lambda: tunnel("127.0.0.2", ${upstreamPort}))
attempt("tunnel service", lambda: tunnel("127.0.0.1", ${port}))
print(json.dumps(out))`;
    const open = await python(anyHost, program);
    expect(open.result.proxy).toBe("http://127.0.0.1:3128");
    expect(open.result.allowed).toEqual([200, "upstream saw GET /hello"]);
    expect(open.result["tunnel allowed"]).toEqual(["ok", "'upstream saw GET /tunnelled'"]);
    for (const refusedTarget of ["service", "metadata", "private"])
      expect(open.result[refusedTarget][0]).toBe(403);
    expect(open.result["tunnel service"][0]).toBe("refused");
    const onList = await python(listed, program.replace("/hello", "/listed"));
    expect(onList.result.allowed).toEqual([200, "upstream saw GET /listed"]);
    expect(onList.result.service[0]).toBe(403);
    // Without a grant there is no proxy to ask.
    const none = await python(await tenant(), program);
    expect(none.result.proxy).toBeNull();
    expect(none.result.allowed[0]).not.toBe(200);
  });

  // This machine's own addresses that are not loopback or private (a public one on a server): a
  // service listening on every interface answers there as it does on loopback.
  const ownAddresses = Object.values(networkInterfaces())
    .flat()
    .filter((address) => address && !address.internal && !isBlockedAddress(address.address))
    .map((address) => address?.address as string);
  it.skipIf(ownAddresses.length === 0)(
    "with egress granted, does not reach this machine's services through its own public addresses",
    async () => {
      const local = createServer((req, res) => res.end(`local service saw ${req.url}`));
      await new Promise<void>((resolve) => local.listen(0, "::", resolve));
      const localPort = (local.address() as AddressInfo).port;
      try {
        const hosts = ownAddresses.flatMap((address) =>
          address.includes(":") ? [`[${address}]`] : [address, `[::ffff:${address}]`],
        );
        const { result } = await python(
          await tenant({ egress: {} }),
          `${TRY}
import urllib.request, http.client
def get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as r: return [r.status, r.read().decode()]
    except urllib.error.HTTPError as e: return [e.code, e.read().decode()[:200]]
    except Exception as e: return ["refused", str(e)[:200]]
def tunnel(host, port):
    c = http.client.HTTPConnection("127.0.0.1", 3128, timeout=5)
    c.set_tunnel(host, port)
    c.request("GET", "/tunnelled")
    return c.getresponse().read().decode()
for host in ${JSON.stringify(hosts)}:
    out["get " + host] = get(f"http://{host}:${localPort}/direct")
    attempt("tunnel " + host, lambda: tunnel(host.strip("[]"), ${localPort}))
print(json.dumps(out))`,
        );
        expect(JSON.stringify(result)).not.toContain("local service saw");
        for (const host of hosts) {
          expect(result[`get ${host}`][0], JSON.stringify(result)).toBe(403);
          expect(result[`tunnel ${host}`][0]).toBe("refused");
        }
      } finally {
        await new Promise<void>((resolve) => local.close(() => resolve()));
      }
    },
  );
});
