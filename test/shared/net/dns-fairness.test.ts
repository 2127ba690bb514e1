import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDnsResolver, type DnsResolverOptions } from "../../../src/shared/net/dns-resolver.ts";
import { assertUrlAllowed, type NetworkPolicy } from "../../../src/shared/net/guarded-request.ts";
import { type FakeDnsServer, startDnsServer } from "../../helpers/dns-server.ts";
import { eventually } from "../../helpers/iii.ts";

let dns: FakeDnsServer;

beforeAll(async () => {
  dns = await startDnsServer({
    "good.test": { A: ["203.0.113.1"] },
    "merge.test": { A: ["203.0.113.2"], AAAA: ["2001:db8::2"] },
    "hot.test": { A: ["203.0.113.3"] },
    "short.test": { A: ["203.0.113.4"], ttl: 30 },
    "long.test": { A: ["203.0.113.5"], ttl: 3600 },
    "zero.test": { A: ["203.0.113.6"], ttl: 0 },
    "mixed.test": { A: ["203.0.113.9", "127.0.0.1"] },
    "a.test": { A: ["203.0.113.11"] },
    "b.test": { A: ["203.0.113.12"] },
    "c.test": { A: ["203.0.113.13"] },
    "missing.test": "nxdomain",
    ...Object.fromEntries(Array.from({ length: 12 }, (_, n) => [`flood${n}.test`, "blackhole" as const])),
  });
});

afterAll(() => dns.close());

/** A clock the cache keeps answers by, moved by hand. */
function clock() {
  let at = 1_000_000;
  return {
    now: () => at,
    advance: (ms: number) => {
      at += ms;
    },
  };
}

const resolverFor = (options: DnsResolverOptions = {}) =>
  createDnsResolver({ servers: [dns.address], hostsFile: null, resolvConf: null, ...options });
const asked = (name: string) => dns.questions.filter((question) => question.startsWith(`${name} `));
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => "resolved",
    (error: NodeJS.ErrnoException) => String(error.code),
  );

describe("the resolver's slots are shared fairly between realms", () => {
  it("a realm flooding names that never answer does not hold up another realm's lookup", async () => {
    const resolve = resolverFor({
      timeoutMs: 2000,
      maxConcurrent: 4,
      maxConcurrentPerRealm: 2,
      maxQueuedPerRealm: 2,
    });
    const order: string[] = [];
    const track = (label: string, promise: Promise<unknown>) =>
      failure(promise).then((code) => {
        order.push(`${label} ${code}`);
        return code;
      });
    // Two sent, two waiting behind them (the realm's share), the fifth refused at once.
    const flood = [0, 1, 2, 3].map((n) => track("flood", resolve(`flood${n}.test`, { realm: "r-flood" })));
    await expect(resolve("flood4.test", { realm: "r-flood" })).rejects.toMatchObject({
      code: "EBUSY",
      message:
        "EBUSY flood4.test: realm r-flood has too many DNS lookups at once (its share: 2 running, 2 waiting)",
    });
    await eventually(() => asked("flood1.test").length === 2);
    // Another realm gets a free slot while the flood's own lookups wait for theirs.
    expect(await track("other", resolve("good.test", { realm: "r-other" }))).toBe("resolved");
    expect(order).toEqual(["other resolved"]);
    expect(asked("flood2.test")).toEqual([]);
    expect(asked("flood4.test")).toEqual([]);
    expect(await Promise.all(flood)).toEqual(Array(4).fill("ETIMEOUT"));
  });

  it("a realm over its share is told so by guardedLookup as 429 naming the share", async () => {
    const resolve = resolverFor({
      timeoutMs: 1000,
      maxConcurrentPerRealm: 1,
      maxQueuedPerRealm: 0,
    });
    const policy: NetworkPolicy = { allowPrivateNetwork: false, resolve, realm: "r-busy" };
    const running = failure(assertUrlAllowed("http://flood5.test/", policy));
    await expect(assertUrlAllowed("http://flood6.test/", policy)).rejects.toMatchObject({
      status: 429,
      message:
        "Could not resolve host flood6.test: EBUSY, realm r-busy has too many DNS lookups at once (its share: 1 running, 0 waiting)",
    });
    // The service's own lookups (no realm) are another caller with a share of their own.
    await expect(
      assertUrlAllowed("http://good.test/", { allowPrivateNetwork: false, resolve }),
    ).resolves.toBeInstanceOf(URL);
    expect(await running).toBe("unavailable");
  });
});

describe("identical lookups merged and answers kept", () => {
  it("lookups of one name at once send one question per family", async () => {
    const resolve = resolverFor();
    const answers = await Promise.all([
      resolve("merge.test", { realm: "r1" }),
      resolve("MERGE.test.", { realm: "r1" }),
      resolve("merge.test", { realm: "r1" }),
    ]);
    for (const answer of answers) expect(answer).toContainEqual({ address: "203.0.113.2", family: 4 });
    expect(asked("merge.test").sort()).toEqual(["merge.test A", "merge.test AAAA"]);
  });

  it("a kept answer sends no question, for any realm, and each caller gets its own copy", async () => {
    const resolve = resolverFor();
    const first = await resolve("hot.test", { realm: "r1" });
    const before = asked("hot.test").length;
    first.push({ address: "127.0.0.1", family: 4 });
    expect(await resolve("hot.test", { realm: "r2" })).toEqual([{ address: "203.0.113.3", family: 4 }]);
    expect(await resolve("hot.test")).toEqual([{ address: "203.0.113.3", family: 4 }]);
    expect(asked("hot.test").length).toBe(before);
  });

  it("keeps an answer for its TTL, at most maxTtlMs, and a TTL of 0 not at all", async () => {
    const time = clock();
    const resolve = resolverFor({ now: time.now, maxTtlMs: 60_000 });
    await resolve("short.test");
    await resolve("long.test");
    await resolve("zero.test");
    await resolve("zero.test");
    expect(asked("zero.test")).toHaveLength(4);
    time.advance(29_000);
    await resolve("short.test");
    expect(asked("short.test")).toHaveLength(2);
    time.advance(2_000);
    await resolve("short.test");
    expect(asked("short.test")).toHaveLength(4);
    await resolve("long.test");
    expect(asked("long.test")).toHaveLength(2);
    time.advance(30_000);
    await resolve("long.test");
    expect(asked("long.test")).toHaveLength(4);
  });

  it("keeps 'no such name' for negativeTtlMs", async () => {
    const time = clock();
    const resolve = resolverFor({ now: time.now, negativeTtlMs: 5_000 });
    expect(await failure(resolve("missing.test"))).toBe("ENOTFOUND");
    expect(await failure(resolve("missing.test", { realm: "r1" }))).toBe("ENOTFOUND");
    expect(asked("missing.test")).toHaveLength(2);
    time.advance(5_001);
    expect(await failure(resolve("missing.test"))).toBe("ENOTFOUND");
    expect(asked("missing.test")).toHaveLength(4);
  });

  it("keeps at most cacheSize names, the least recently used going first", async () => {
    const resolve = resolverFor({ cacheSize: 2 });
    await resolve("a.test");
    await resolve("b.test");
    await resolve("a.test");
    await resolve("c.test");
    await resolve("a.test");
    expect(asked("a.test")).toHaveLength(2);
    await resolve("b.test");
    expect(asked("b.test")).toHaveLength(4);
  });

  it("a kept answer is checked by the SSRF rule every time it is used", async () => {
    const resolve = resolverFor();
    const policy: NetworkPolicy = { allowPrivateNetwork: false, resolve };
    for (let n = 0; n < 2; n++) {
      await expect(assertUrlAllowed("http://mixed.test/", policy)).rejects.toThrow(
        "SSRF protection: http://mixed.test/ resolves to blocked IP 127.0.0.1",
      );
    }
    expect(asked("mixed.test")).toHaveLength(2);
  });
});
