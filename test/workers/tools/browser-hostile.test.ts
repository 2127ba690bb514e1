import { existsSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { systemResolver } from "../../../src/shared/net/guarded-request.ts";
import { DEFAULT_BROWSER_PATH, sharedBrowser } from "../../../src/workers/tools/browser/chromium.ts";
import { MAX_SCREENSHOT_PIXELS, ScreenshotPages } from "../../../src/workers/tools/browser/screenshots.ts";
import { openPage, Sessions, sessions } from "../../../src/workers/tools/browser/sessions.ts";
import { toolsServer } from "./setup.ts";

/** Hostile pages the agent is steered to, against a service that allows only 127.0.0.1 (the test site). */
const chromium = process.env.AGENTOS_BROWSER_PATH || DEFAULT_BROWSER_PATH;
const available = existsSync(chromium);

const env = toolsServer({ AGENTOS_ALLOW_PRIVATE_NETWORK: "0", AGENTOS_ALLOWED_ADDRESSES: "127.0.0.1" });
let site: Server;
let base = "";
let port = 0;
const held: ServerResponse[] = [];
let spinGo = false;
let spinAsked = false;
const localOnly = {
  allowPrivateNetwork: false,
  allowedAddresses: new Set(["127.0.0.1"]),
  resolve: systemResolver,
};

const html = (res: ServerResponse, body: string) =>
  void res.writeHead(200, { "content-type": "text/html" }).end(body);

function route(req: IncomingMessage, res: ServerResponse): void {
  if (req.url === "/") return void html(res, "<title>Plain</title><p>plain</p>");
  // Never answers: a navigation to it can only time out.
  if (req.url === "/slow") return void held.push(res);
  if (req.url === "/to-private")
    return void res
      .writeHead(302, { location: `http://127.0.0.2:${port}/secret?token=other-realms-secret` })
      .end();
  if (req.url === "/popups")
    return void html(
      res,
      "<title>Popups</title><script>for (let i = 0; i < 40; i++) window.open('/?' + i)</script>",
    );
  // Spins once the test says so (a timer would start it before the navigation's title is read under load).
  if (req.url === "/spin")
    return void html(
      res,
      "<title>Spin</title><p>spinning</p><script>setInterval(() => fetch('/spin-go').then((r) => r.text()).then((go) => { if (go === 'go') for (;;) {} }), 50)</script>",
    );
  if (req.url === "/spin-go") {
    if (spinGo) spinAsked = true;
    return void res.writeHead(200, { "content-type": "text/plain" }).end(spinGo ? "go" : "wait");
  }
  if (req.url === "/spin-now")
    return void html(
      res,
      "<title>Spin</title><script>addEventListener('load', () => setTimeout(() => { for (;;) {} }))</script>",
    );
  if (req.url === "/flood")
    return void html(
      res,
      `<script>Promise.allSettled(Array.from({ length: 300 }, (_, i) => fetch("http://127.0.0.2:${port}/" + i))).then(() => { document.title = "done"; })</script>`,
    );
  if (req.url === "/tall")
    return void html(
      res,
      "<title>Tall</title><div style='height:2000000px;background:linear-gradient(red,blue)'></div>",
    );
  res.writeHead(404).end("nothing");
}

beforeAll(async () => {
  site = createServer(route);
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  port = (site.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  for (const res of held) res.destroy();
  await new Promise<void>((resolve) => site.close(() => resolve()));
});

describe.skipIf(!available)("browser tools against hostile pages", () => {
  it("never names another agent's refused request in an agent's error", async () => {
    const victim = await env.agent();
    const other = await env.agent();
    // Both sessions open before either page is refused anything.
    await env.tool("tool::browser_navigate", { url: `${base}/` }, victim);
    await env.tool("tool::browser_navigate", { url: `${base}/` }, other);
    const refused = await env.failure("tool::browser_navigate", { url: `${base}/to-private` }, victim);
    expect(refused.message).toContain("other-realms-secret");
    const slow = await env.failure("tool::browser_navigate", { url: `${base}/slow`, timeoutMs: 1000 }, other);
    expect(slow.message).not.toContain("other-realms-secret");
    expect(slow).toMatchObject({ status: 422, message: `${base}/slow did not load within 1000 ms` });
  });

  it("does not call an unreachable allowed host an SSRF block", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await env.agent();
    const failed = await env.failure("tool::browser_navigate", { url: `https://127.0.0.1:${closedPort}/` });
    expect(failed.message).not.toContain("SSRF");
    expect(failed).toMatchObject({ status: 422 });
    expect(failed.message).toContain(`https://127.0.0.1:${closedPort}/ could not be loaded`);
  });

  it("tells no one outside an agent's realm whether it has a page open", async () => {
    const browsing = await env.agent();
    const idle = await env.agent();
    const outsider = await env.agent();
    await env.tool("tool::browser_navigate", { url: `${base}/` }, browsing);
    for (const id of ["tool::browser_read_page", "tool::browser_screenshot"]) {
      const open = await env.failure(id, { agentId: browsing.agentId }, outsider);
      const closed = await env.failure(id, { agentId: idle.agentId }, outsider);
      expect(open).toMatchObject({ status: 404 });
      expect(closed).toMatchObject({ status: 404, message: `Agent ${idle.agentId} not found` });
    }
  });

  it("opens one session for an agent's calls at once, and closing it leaves no context behind", async () => {
    const browser = await sharedBrowser.browser(chromium);
    const before = browser.contexts().length;
    await env.agent();
    // One page for all three: a navigation may abort another (that one fails), but none opens a page of its own.
    const calls = await Promise.allSettled(
      [1, 2, 3].map(() => env.tool("tool::browser_navigate", { url: `${base}/` })),
    );
    expect(calls.some((call) => call.status === "fulfilled")).toBe(true);
    expect(browser.contexts().length).toBe(before + 1);
    await env.tool("tool::browser_close", {});
    expect(browser.contexts().length).toBe(before);
  });

  it("keeps no more sessions than its cap, however many agents open one at once", async () => {
    const few = new Sessions(2);
    const agents = ["agent-a", "agent-b", "agent-c"];
    // All at once: each call must hold its slot before it awaits its page, or every one finds room.
    // One realm's agents: the realm may replace its own sessions at the cap (another realm's: see browser-limits).
    const owner = (agentId: string) => ({ agentId, realmId: "realm-a" });
    const calls = await Promise.allSettled(
      agents.map((agentId) => few.of(owner(agentId), chromium, localOnly)),
    );
    try {
      expect(agents.filter((agentId) => few.has(agentId))).toHaveLength(2);
      expect(calls.filter((call) => call.status === "rejected").map((call) => call.reason)).toEqual([
        expect.objectContaining({
          status: 429,
          message: expect.stringContaining("at most 2 browser sessions"),
        }),
      ]);
      // With every slot open (none still opening), a new session takes an open one's place (the least recently used).
      await few.of(owner("agent-d"), chromium, localOnly);
      expect([...agents, "agent-d"].filter((agentId) => few.has(agentId))).toHaveLength(2);
      expect(few.has("agent-d")).toBe(true);
    } finally {
      await Promise.all([...agents, "agent-d"].map((agentId) => few.close(agentId)));
    }
  });

  it("takes no more screenshots at once than its cap, however many realms ask at once", async () => {
    const few = new ScreenshotPages(2);
    let pages = 0;
    let letGo = () => {};
    const holding = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    const refused: unknown[] = [];
    const calls = ["realm-a", "realm-b", "realm-c"].map((realm) =>
      few
        .use(realm, chromium, localOnly, { width: 320, height: 200 }, async () => {
          pages++;
          await holding;
        })
        .catch((error) => void refused.push(error)),
    );
    try {
      // Every call has either its page open (held in its work) or been refused.
      await vi.waitFor(() => expect(pages + refused.length).toBe(3), { timeout: 20_000 });
      expect(pages).toBe(2);
      expect(refused).toEqual([
        expect.objectContaining({ status: 429, message: expect.stringContaining("at most 2 screenshots") }),
      ]);
    } finally {
      letGo();
      await Promise.all(calls);
    }
  });

  it("keeps a bounded list of a page's refused requests, however many it makes", async () => {
    const policy = {
      allowPrivateNetwork: false,
      allowedAddresses: new Set(["127.0.0.1"]),
      resolve: systemResolver,
    };
    const { context, page, blocked } = await openPage(chromium, policy);
    try {
      await page.goto(`${base}/flood`);
      await page.waitForFunction("document.title === 'done'");
      expect(blocked.length).toBe(50);
      expect(blocked[0]).toMatch(/^SSRF protection: .* resolves to blocked IP 127\.0\.0\.2$/);
    } finally {
      await context.close();
    }
  });

  it("keeps a session to its one page: popups a page opens are closed", async () => {
    const owner = await env.agent();
    await env.tool("tool::browser_navigate", { url: `${base}/popups` });
    const session = await sessions.of(owner, chromium, undefined as never);
    await session.page.waitForTimeout(500);
    expect(session.context.pages()).toEqual([session.page]);
  });

  it("cuts a full-page screenshot of an endless page at a screenshot's pixel limit", async () => {
    await env.agent();
    const shot = await env.tool<{ screenshot: string }>("tool::browser_screenshot", {
      url: `${base}/tall`,
      fullPage: true,
    });
    const png = Buffer.from(shot.screenshot, "base64");
    const [width, height] = [png.readUInt32BE(16), png.readUInt32BE(20)];
    expect(width).toBe(1280);
    expect(height).toBe(Math.floor(MAX_SCREENSHOT_PIXELS / 1280));
  });

  it("never hands a realm's next screenshot the page a spinning script left behind", async () => {
    const realm = await env.agent();
    const spun = await env.failure(
      "tool::browser_screenshot",
      { url: `${base}/spin-now`, timeoutMs: 2000 },
      realm,
    );
    expect(spun.status).toBe(422);
    const shot = await env.tool<{ url: string }>(
      "tool::browser_screenshot",
      { url: `${base}/`, timeoutMs: 2000 },
      realm,
    );
    expect(shot.url).toBe(`${base}/`);
  });

  it("answers read_page on a page whose script never yields with an error, not a hang, and closes the session", async () => {
    const { agentId } = await env.agent();
    await env.tool("tool::browser_navigate", { url: `${base}/spin` });
    spinGo = true;
    // The page has been told: its script is spinning by now.
    while (!spinAsked) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const failed = await env.failure("tool::browser_read_page", {});
    expect(failed).toMatchObject({
      status: 422,
      message:
        "The page did not answer within 15000 ms: a script on it keeps it busy; your browser session was closed",
    });
    // Its script would otherwise keep a CPU busy for as long as the session lasts.
    expect(sessions.has(agentId)).toBe(false);
  });
});
