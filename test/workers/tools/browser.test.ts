import { createSocket } from "node:dgram";
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemResolver } from "../../../src/shared/net/guarded-request.ts";
import { DEFAULT_BROWSER_PATH } from "../../../src/workers/tools/browser/chromium.ts";
import { openPage } from "../../../src/workers/tools/browser/sessions.ts";
import { toolsServer } from "./setup.ts";

const chromium = process.env.AGENTOS_BROWSER_PATH || DEFAULT_BROWSER_PATH;
const available = existsSync(chromium);
if (!available)
  console.warn(`browser tests skipped: no Chromium at ${chromium} (npm install as root installs it)`);

const asRoot = process.getuid?.() === 0;
const sandboxOff = process.env.AGENTOS_SANDBOX?.trim() === "off";
if (available && (!asRoot || sandboxOff))
  console.warn(
    `browser sandbox test skipped: ${sandboxOff ? "AGENTOS_SANDBOX=off" : "not root, so Chromium keeps the test's own uid"}`,
  );

const env = toolsServer();
let site: Server;
let base = "";
let port = 0;
const hits: string[] = [];

const PAGE = `<!doctype html><html><head><title>Form page</title></head><body style="margin:0;background:#3366cc">
<h1 id="greeting">Hello</h1>
<input id="name"><button id="go" onclick="document.getElementById('greeting').textContent = 'Hi ' + document.getElementById('name').value">Go</button>
<a id="next" href="/second">next</a>
</body></html>`;

beforeAll(async () => {
  site = createServer((req, res) => {
    hits.push(`${req.headers.host}${req.url}`);
    if (req.url === "/") return void res.writeHead(200, { "content-type": "text/html" }).end(PAGE);
    if (req.url === "/second")
      return void res
        .writeHead(200, { "content-type": "text/html" })
        .end("<title>Second</title><p>second page</p>");
    if (req.url === "/leaky") {
      // A page that reaches for another (private) address: the browser must not get there.
      const html = `<title>Leaky</title><img src="http://127.0.0.2:${port}/secret-img"><script>fetch("http://127.0.0.2:${port}/secret-fetch").catch(() => {})</script>`;
      return void res.writeHead(200, { "content-type": "text/html" }).end(html);
    }
    if (req.url?.startsWith("/webrtc?")) {
      // A page that tries WebRTC (from itself and from a fresh iframe) against a STUN server on loopback:
      // STUN goes out over UDP, which the guarding proxy never sees.
      const html = `<title>WebRTC</title><pre id="out"></pre><script>
const stun = "stun:127.0.0.1:" + new URLSearchParams(location.search).get("port");
const report = [];
function attempt(label, win) {
  const PeerConnection = win.RTCPeerConnection || win.webkitRTCPeerConnection;
  if (typeof PeerConnection !== "function") return report.push(label + ": RTCPeerConnection unavailable");
  try {
    const pc = new PeerConnection({ iceServers: [{ urls: stun }] });
    pc.createDataChannel("probe");
    pc.createOffer().then((offer) => pc.setLocalDescription(offer));
    report.push(label + ": RTCPeerConnection created");
  } catch (error) {
    report.push(label + ": " + error.message);
  }
}
attempt("page", window);
const frame = document.createElement("iframe");
document.body.append(frame);
attempt("iframe", frame.contentWindow);
document.getElementById("out").textContent = report.join("\\n");
</script>`;
      return void res.writeHead(200, { "content-type": "text/html" }).end(html);
    }
    if (req.url === "/redirect")
      return void res.writeHead(302, { location: `http://127.0.0.2:${port}/secret-redirect` }).end();
    res.writeHead(404).end("nothing");
  });
  await new Promise<void>((resolve) => site.listen(0, "0.0.0.0", resolve));
  port = (site.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});
afterAll(() => new Promise<void>((resolve) => site.close(() => resolve())));

/** Width and height from a PNG's IHDR chunk, after checking the signature. */
function pngSize(base64: string): { width: number; height: number } {
  const png = Buffer.from(base64, "base64");
  expect(png.subarray(0, 8).toString("hex")).toBe("89504e470d0a1a0a");
  expect(png.subarray(12, 16).toString("latin1")).toBe("IHDR");
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

interface Proc {
  pid: string;
  ppid: string;
  cmdline: string;
  status: string;
}

/** Every process now, with its parent, command line (spaces for NULs) and /proc status. */
function processes(): Proc[] {
  const all: Proc[] = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const ppid = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1] ?? "";
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
      all.push({ pid, ppid, cmdline, status: readFileSync(`/proc/${pid}/status`, "utf8") });
    } catch {} // gone meanwhile
  }
  return all;
}

/** `roots` and every process below them. */
function withDescendants(all: Proc[], roots: string[]): Set<string> {
  const found = new Set(roots);
  let size = 0;
  while (size !== found.size) {
    size = found.size;
    for (const proc of all) if (found.has(proc.ppid)) found.add(proc.pid);
  }
  return found;
}

/** This process's Chromium: the browser it spawned, its descendants, and what names its profile (crashpad, reparented). */
function chromiumProcesses(): Proc[] {
  const all = processes();
  const ours = withDescendants(all, [String(process.pid)]);
  const browsers = all.filter(
    (proc) => ours.has(proc.pid) && proc.cmdline.includes("--remote-debugging-pipe"),
  );
  const profiles = browsers.map((proc) => proc.cmdline.match(/--user-data-dir=(\S+)/)?.[1] ?? "\0");
  const tree = withDescendants(
    all,
    browsers.map((proc) => proc.pid),
  );
  return all.filter(
    (proc) => tree.has(proc.pid) || profiles.some((profile) => proc.cmdline.includes(profile)),
  );
}

/** The browser process a Chromium child descends from. */
function browserOf(found: Proc[], child: Proc): Proc {
  const byPid = new Map(found.map((proc) => [proc.pid, proc]));
  for (let proc = byPid.get(child.ppid); proc; proc = byPid.get(proc.ppid))
    if (proc.cmdline.includes("--remote-debugging-pipe")) return proc;
  throw new Error(`no browser above ${child.pid}: ${child.cmdline.slice(0, 200)}`);
}

const field = (proc: Proc, name: string) =>
  proc.status.match(new RegExp(`^${name}:\\s*(.*)$`, "m"))?.[1] ?? "";

describe.skipIf(!available)("browser tools on a real Chromium", () => {
  it.skipIf(!asRoot || sandboxOff)(
    "runs Chromium as a uid of its own, sandboxed by Chromium itself",
    async () => {
      const policy = {
        allowPrivateNetwork: true,
        allowedAddresses: new Set<string>(),
        resolve: systemResolver,
      };
      const { context, page } = await openPage(chromium, policy);
      try {
        await page.goto(`${base}/`, { waitUntil: "load" });
        const found = chromiumProcesses();
        const browser = found.find((proc) => proc.cmdline.includes("--remote-debugging-pipe"));
        const renderers = found.filter((proc) => proc.cmdline.includes("--type=renderer"));
        expect(browser).toBeDefined();
        expect(renderers.length).toBeGreaterThan(0);
        for (const proc of found) {
          expect(field(proc, "Uid").split(/\s+/), proc.cmdline.slice(0, 200)).not.toContain("0");
          expect(proc.cmdline).not.toContain("--no-sandbox");
        }
        // Renderers: seccomp-bpf on, in user and pid namespaces apart from the browser's.
        // Each renderer against its own browser: other test files of this worker may run Chromiums too.
        const ns = (pid: string, kind: string) => readlinkSync(`/proc/${pid}/ns/${kind}`);
        for (const renderer of renderers) {
          const itsBrowser = browserOf(found, renderer);
          expect(field(renderer, "Seccomp")).toBe("2");
          expect(ns(renderer.pid, "user")).not.toBe(ns(itsBrowser.pid, "user"));
          expect(ns(renderer.pid, "pid")).not.toBe(ns(itsBrowser.pid, "pid"));
        }
      } finally {
        await context.close();
      }
    },
  );

  it("screenshots a local page as a valid PNG of the requested size", async () => {
    const shot = await env.tool<{ screenshot: string }>("tool::browser_screenshot", {
      url: `${base}/`,
      viewport: { width: 640, height: 400 },
    });
    expect(pngSize(shot.screenshot)).toEqual({ width: 640, height: 400 });
    const full = await env.tool<{ screenshot: string }>("tool::browser_screenshot", {
      url: `${base}/`,
      viewport: { width: 320, height: 200 },
      fullPage: true,
    });
    expect(pngSize(full.screenshot).width).toBe(320);
  });

  it("drives a page in the agent's session: navigate, type, click, read, close", async () => {
    const { agentId } = await env.agent();
    expect(await env.tool("tool::browser_navigate", { url: `${base}/` })).toMatchObject({
      status: 200,
      title: "Form page",
    });
    expect(await env.tool("tool::browser_type", { selector: "#name", text: "Ada" })).toMatchObject({
      typed: 3,
    });
    await env.tool("tool::browser_action", { action: "click", selector: "#go" });
    expect(await env.tool("tool::browser_read_page", {})).toMatchObject({
      text: expect.stringContaining("Hi Ada"),
    });
    await env.tool("tool::browser_click", { selector: "#next" });
    expect(await env.tool("tool::browser_action", { action: "wait", selector: "p" })).toMatchObject({
      found: true,
    });
    expect(await env.tool("tool::browser_read_page", {})).toMatchObject({
      title: "Second",
      text: "second page",
    });
    const shot = await env.tool<{ screenshot: string }>("tool::browser_screenshot", { agentId });
    expect(pngSize(shot.screenshot)).toEqual({ width: 1280, height: 720 });
    expect(await env.tool("tool::browser_close", {})).toEqual({ closed: true });
    expect((await env.failure("tool::browser_read_page", {})).message).toContain("No page is open");
  });

  it("answers a selector that never appears with an error, not a hang", async () => {
    await env.agent();
    await env.tool("tool::browser_navigate", { url: `${base}/` });
    const started = Date.now();
    const failed = await env.failure("tool::browser_click", { selector: "#missing", timeoutMs: 500 });
    expect(failed).toMatchObject({ status: 422, message: "No element matches #missing within 500 ms" });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("keeps every request of the page to the SSRF rule: subresources, fetches and redirects", async () => {
    const policy = {
      allowPrivateNetwork: false,
      allowedAddresses: new Set(["127.0.0.1"]),
      resolve: systemResolver,
    };
    const { context, page, blocked, refused } = await openPage(chromium, policy);
    try {
      await page.goto(`${base}/leaky`, { waitUntil: "load" });
      await page.waitForTimeout(300);
      expect(hits.filter((hit) => hit.includes("secret"))).toEqual([]);
      expect(
        blocked.some((message) => message.includes("SSRF protection") && message.includes("127.0.0.2")),
      ).toBe(true);
      await expect(page.goto(`${base}/redirect`)).rejects.toThrow();
      expect(hits.filter((hit) => hit.includes("secret"))).toEqual([]);
      // The redirect hop never reached the page's routes: the proxy refused it, with the rule's message.
      expect(
        refused.some((message) => message.includes("secret-redirect") && message.includes("SSRF protection")),
      ).toBe(true);
    } finally {
      await context.close();
    }
  });

  it("gives pages no WebRTC, and Chromium sends no UDP around the guarding proxy", async () => {
    const udp = createSocket("udp4");
    const packets: string[] = [];
    udp.on("message", (message, from) =>
      packets.push(`${from.address}:${from.port} ${message.length} bytes`),
    );
    await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", resolve));
    const stunPort = udp.address().port;
    const policy = {
      allowPrivateNetwork: false,
      allowedAddresses: new Set(["127.0.0.1"]),
      resolve: systemResolver,
    };
    const { context, page } = await openPage(chromium, policy);
    try {
      await page.goto(`${base}/webrtc?port=${stunPort}`, { waitUntil: "load" });
      // The launch flag alone: an isolated world (which the page's init script never touches) still has
      // RTCPeerConnection, and its STUN requests must not leave as UDP either.
      const cdp = await context.newCDPSession(page);
      const { frameTree } = await cdp.send("Page.getFrameTree");
      const { executionContextId } = await cdp.send("Page.createIsolatedWorld", {
        frameId: frameTree.frame.id,
        worldName: "webrtc-probe",
      });
      const isolated = await cdp.send("Runtime.evaluate", {
        contextId: executionContextId,
        awaitPromise: true,
        returnByValue: true,
        expression: `(async () => {
          const pc = new RTCPeerConnection({ iceServers: [{ urls: "stun:127.0.0.1:${stunPort}" }] });
          pc.createDataChannel("probe");
          await pc.setLocalDescription(await pc.createOffer());
          return "created";
        })()`,
      });
      expect(isolated.exceptionDetails).toBeUndefined();
      await page.waitForTimeout(3000);
      expect({ report: await page.locator("#out").textContent(), udpPackets: packets }).toEqual({
        report: "page: RTCPeerConnection unavailable\niframe: RTCPeerConnection unavailable",
        udpPackets: [],
      });
    } finally {
      await context.close();
      udp.close();
    }
  });
});

describe.skipIf(!available)("browser tools where private networks are refused", () => {
  const strict = toolsServer({ AGENTOS_ALLOW_PRIVATE_NETWORK: "0" });
  it("refuses to open a private address with the SSRF message", async () => {
    const refused = await strict.failure("tool::browser_screenshot", { url: `${base}/` });
    expect(refused.message).toMatch(/^SSRF protection: .* resolves to blocked IP 127\.0\.0\.1/);
  });
});
