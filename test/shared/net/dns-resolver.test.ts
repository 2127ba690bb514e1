import nodeDns from "node:dns";
import { lookup as threadpoolLookup } from "node:dns/promises";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDnsResolver, parseHosts } from "../../../src/shared/net/dns-resolver.ts";
import {
  assertUrlAllowed,
  guardedRequest,
  type NetworkPolicy,
  systemResolver,
} from "../../../src/shared/net/guarded-request.ts";
import { type FakeDnsServer, startDnsServer } from "../../helpers/dns-server.ts";
import { eventually } from "../../helpers/iii.ts";

let dns: FakeDnsServer;
let dir: string;
let web: Server;
let webPort = 0;

beforeAll(async () => {
  dns = await startDnsServer({
    "public.test": { A: ["203.0.113.7"], AAAA: ["2001:db8::7"] },
    "v4only.test": { A: ["203.0.113.8"] },
    "site.test": { A: ["127.0.0.2"] },
    "mixed.test": { A: ["203.0.113.9", "127.0.0.1"] },
    "gone.test": "nxdomain",
    "mcp-github.svc.test": { A: ["203.0.113.30"] },
    "mcp-github": "nxdomain",
    ...Object.fromEntries(Array.from({ length: 12 }, (_, n) => [`hole${n}.test`, "blackhole" as const])),
  });
  dir = await mkdtemp(join(tmpdir(), "dns-resolver-"));
  await writeFile(
    join(dir, "hosts"),
    "# operator's names\n203.0.113.20 intranet.test wiki # comment\n10.0.0.5 db.test\n::1 six.test\n",
  );
  web = createServer((_req, res) => res.end("hello"));
  await new Promise<void>((resolve) => web.listen(0, "127.0.0.2", resolve));
  webPort = (web.address() as { port: number }).port;
});

afterAll(async () => {
  await dns.close();
  await rm(dir, { recursive: true, force: true });
  await new Promise<void>((resolve) => web.close(() => resolve()));
});

const resolverFor = (options: Parameters<typeof createDnsResolver>[0] = {}) =>
  createDnsResolver({ servers: [dns.address], hostsFile: join(dir, "hosts"), resolvConf: null, ...options });
const asked = (name: string) => dns.questions.filter((question) => question.startsWith(`${name} `));
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => "resolved",
    (error: NodeJS.ErrnoException) => String(error.code),
  );

describe("createDnsResolver (untrusted names through c-ares)", () => {
  it("asks the DNS server for A and AAAA and answers both families, IPv4 first", async () => {
    const resolve = resolverFor();
    expect(await resolve("Public.Test.")).toEqual([
      { address: "203.0.113.7", family: 4 },
      { address: "2001:db8::7", family: 6 },
    ]);
    expect(asked("public.test").sort()).toEqual(["public.test A", "public.test AAAA"]);
    expect(await resolve("v4only.test")).toEqual([{ address: "203.0.113.8", family: 4 }]);
    expect(await failure(resolve("gone.test"))).toBe("ENOTFOUND");
  });

  it("applies the resolv.conf search list as getaddrinfo does: short names with the domains first, absolute names as they are", async () => {
    await writeFile(
      join(dir, "resolv.conf"),
      "nameserver 192.0.2.1\nsearch svc.test other.test\noptions ndots:1\n",
    );
    const resolve = resolverFor({ resolvConf: join(dir, "resolv.conf") });
    expect(await resolve("mcp-github")).toEqual([{ address: "203.0.113.30", family: 4 }]);
    expect(asked("mcp-github")).toEqual([]);
    expect(await failure(resolve("mcp-github."))).toBe("ENOTFOUND");
    expect(asked("mcp-github").length).toBeGreaterThan(0);
    expect(asked("public.test.svc.test")).toEqual([]);
    expect(await resolve("public.test")).toContainEqual({ address: "203.0.113.7", family: 4 });
    expect(asked("public.test.svc.test")).toEqual([]);
  });

  it("the default resolver uses node's DNS servers (dns.setServers), not getaddrinfo", async () => {
    const before = nodeDns.getServers();
    nodeDns.setServers([dns.address]);
    try {
      expect(await systemResolver("public.test")).toContainEqual({ address: "203.0.113.7", family: 4 });
    } finally {
      nodeDns.setServers(before);
    }
  });

  it("a server that never answers fails the lookup at its deadline, with libuv's threadpool free meanwhile", async () => {
    const resolve = resolverFor({ timeoutMs: 3000, maxConcurrent: 8 });
    // Twice the threadpool's default size: as getaddrinfo calls these would queue everything behind them.
    const settled: string[] = [];
    const lookups = Array.from({ length: 8 }, (_, n) =>
      failure(resolve(`hole${n}.test`)).then((code) => {
        settled.push(code);
        return code;
      }),
    );
    await eventually(() => asked("hole7.test").length === 2);
    // Work on the pool (a file read, the service's own getaddrinfo) goes through at once.
    await readFile(join(dir, "hosts"));
    await threadpoolLookup("localhost");
    expect(settled).toEqual([]);
    expect(await Promise.all(lookups)).toEqual(Array(8).fill("ETIMEOUT"));
  });

  it("runs at most maxConcurrent lookups; more wait (within the deadline) up to maxQueued, then EBUSY", async () => {
    const resolve = resolverFor({ timeoutMs: 1500, maxConcurrent: 2, maxQueued: 1 });
    const running = [failure(resolve("hole8.test")), failure(resolve("hole9.test"))];
    const queued = failure(resolve("hole10.test"));
    expect(await failure(resolve("hole11.test"))).toBe("EBUSY");
    await eventually(() => asked("hole8.test").length === 2 && asked("hole9.test").length === 2);
    // While both slots are taken, the third waits unsent; the fourth was refused without a query.
    expect(asked("hole10.test")).toEqual([]);
    expect(await Promise.all([...running, queued])).toEqual(["ETIMEOUT", "ETIMEOUT", "ETIMEOUT"]);
    expect(asked("hole11.test")).toEqual([]);
    // The slots are free again.
    expect(await resolve("v4only.test")).toEqual([{ address: "203.0.113.8", family: 4 }]);
  });

  it("answers localhost and *.localhost as loopback without asking DNS, so the SSRF rule refuses them", async () => {
    const resolve = resolverFor();
    const loopback = [
      { address: "127.0.0.1", family: 4 },
      { address: "::1", family: 6 },
    ];
    expect(await resolve("localhost")).toEqual(loopback);
    expect(await resolve("LOCALHOST.")).toEqual(loopback);
    expect(await resolve("admin.localhost")).toEqual(loopback);
    expect(dns.questions.filter((question) => question.includes("localhost"))).toEqual([]);
    await expect(
      assertUrlAllowed("http://localhost:8080/", { allowPrivateNetwork: false, resolve }),
    ).rejects.toThrow(/^SSRF protection: http:\/\/localhost:8080\/ resolves to blocked IP 127\.0\.0\.1$/);
    // With the private network allowed (local development) localhost still works.
    await expect(
      assertUrlAllowed("http://localhost:8080/", { allowPrivateNetwork: true, resolve }),
    ).resolves.toBeInstanceOf(URL);
  });

  it("answers names in the hosts file from it, and the SSRF rule checks those addresses too", async () => {
    const resolve = resolverFor();
    expect(await resolve("intranet.test")).toEqual([{ address: "203.0.113.20", family: 4 }]);
    expect(await resolve("WIKI")).toEqual([{ address: "203.0.113.20", family: 4 }]);
    expect(asked("intranet.test")).toEqual([]);
    const policy: NetworkPolicy = { allowPrivateNetwork: false, resolve };
    await expect(assertUrlAllowed("http://db.test/", policy)).rejects.toThrow(
      "SSRF protection: http://db.test/ resolves to blocked IP 10.0.0.5",
    );
    await expect(assertUrlAllowed("http://six.test/", policy)).rejects.toThrow("blocked IP ::1");
  });

  it("parses hosts files as getaddrinfo does: comments, aliases, every line of a name", () => {
    const hosts = parseHosts("1.2.3.4 a b\n# 9.9.9.9 a\n5.6.7.8 A\nnot-an-ip c\n fe80::1  d.\n");
    expect(hosts.get("a")).toEqual([
      { address: "1.2.3.4", family: 4 },
      { address: "5.6.7.8", family: 4 },
    ]);
    expect(hosts.get("d")).toEqual([{ address: "fe80::1", family: 6 }]);
    expect(hosts.has("c")).toBe(false);
  });
});

describe("guardedRequest with names resolved by the c-ares resolver", () => {
  const policy = (): NetworkPolicy => ({
    allowPrivateNetwork: false,
    allowedAddresses: new Set(["127.0.0.2"]),
    resolve: resolverFor(),
  });

  it("connects to the address that was resolved and checked", async () => {
    const response = await guardedRequest(`http://site.test:${webPort}/`, {
      maxBytes: 100,
      policy: policy(),
    });
    expect(response.body.toString()).toBe("hello");
  });

  it("refuses a name when any of its addresses is blocked", async () => {
    await expect(
      guardedRequest(`http://mixed.test:${webPort}/`, { maxBytes: 100, policy: policy() }),
    ).rejects.toThrow(/resolves to blocked IP 127\.0\.0\.1$/);
  });

  it("reports a name that does not answer in time as a resolution failure", async () => {
    const slow: NetworkPolicy = { ...policy(), resolve: resolverFor({ timeoutMs: 200 }) };
    await expect(guardedRequest("http://hole0.test/", { maxBytes: 100, policy: slow })).rejects.toMatchObject(
      {
        message: "Could not resolve host hole0.test: ETIMEOUT",
      },
    );
  });
});
