import { existsSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { systemResolver } from "../../../src/shared/net/guarded-request.ts";
import { DEFAULT_BROWSER_PATH, sharedBrowser } from "../../../src/workers/tools/browser/chromium.ts";
import { MAX_REQUESTS } from "../../../src/workers/tools/browser/guard.ts";
import { ScreenshotPages } from "../../../src/workers/tools/browser/screenshots.ts";
import { openPage, Sessions } from "../../../src/workers/tools/browser/sessions.ts";
import { toolsServer } from "./setup.ts";

/** What a node's browser holds at most, whatever pages, models and other realms do. */
const chromium = process.env.AGENTOS_BROWSER_PATH || DEFAULT_BROWSER_PATH;
const available = existsSync(chromium);

const env = toolsServer();
let site: Server;
let base = "";
const local = { allowPrivateNetwork: true, allowedAddresses: new Set<string>(), resolve: systemResolver };

const html = (res: ServerResponse, body: string) =>
  void res.writeHead(200, { "content-type": "text/html" }).end(body);

/** Random pixels over the whole viewport: a PNG of them cannot be compressed. */
const NOISE = `<body style="margin:0"><canvas id="c"></canvas><script>
const c = document.getElementById("c"); c.width = innerWidth; c.height = innerHeight;
const g = c.getContext("2d"); const d = g.createImageData(c.width, c.height);
for (let i = 0; i < d.data.length; i++) d.data[i] = (i % 4 === 3) ? 255 : (Math.random() * 256) | 0;
g.putImageData(d, 0, 0);
</script>`;

function route(req: IncomingMessage, res: ServerResponse): void {
  if (req.url === "/") return void html(res, "<title>Plain</title><p>plain</p>");
  if (req.url === "/noise") return void html(res, NOISE);
  // Counts the popups the browser let it open (window.open answers null for a blocked one).
  if (req.url === "/popups")
    return void html(
      res,
      "<script>let opened = 0; for (let i = 0; i < 20; i++) if (window.open('/?' + i)) opened++; document.title = 'opened ' + opened;</script>",
    );
  if (req.url === "/dialogs")
    return void html(
      res,
      "<script>for (let i = 0; i < 20; i++) { alert(i); confirm(i); prompt(i); } document.title = 'done';</script>",
    );
  if (req.url === "/huge-title")
    return void html(res, "<p>body</p><script>document.title = 'y'.repeat(1000000)</script>");
  // A page that would hand the reader far more than it asks for: innerText and slice patched.
  if (req.url === "/flood-text")
    return void html(
      res,
      `<title>Flood</title><p>plain</p><script>
Object.defineProperty(HTMLElement.prototype, "innerText", { get: () => "z".repeat(1000000) });
String.prototype.slice = function () { return String(this); };
String.prototype.substring = String.prototype.slice;
</script>`,
    );
  // Fetches without end to an address the rule refuses: each one still passes the service.
  if (req.url === "/fetch-storm")
    return void html(
      res,
      "<script>setInterval(() => { for (let i = 0; i < 100; i++) fetch('http://127.0.0.2/' + i).catch(() => {}); }, 10)</script>",
    );
  res.writeHead(404).end("nothing");
}

beforeAll(async () => {
  site = createServer(route);
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => site.close(() => resolve())));

describe.skipIf(!available)("browser limits", () => {
  it("keeps a bounded number of warm screenshot pages, however many realms take one", async () => {
    const browser = await sharedBrowser.browser(chromium);
    // Contexts of other files' tests (this fork shares the browser) may close meanwhile: count only new ones.
    const before = new Set(browser.contexts());
    const opened = () => browser.contexts().filter((context) => !before.has(context)).length;
    const pages = new ScreenshotPages(4, 2);
    for (const realm of ["realm-a", "realm-b", "realm-c", "realm-d"])
      await pages.use(realm, chromium, local, { width: 320, height: 200 }, async () => undefined);
    // The two most recent stay warm; the older ones were closed to make room.
    expect(opened()).toBe(2);
    // A realm whose page was closed gets a fresh one, and the oldest warm page leaves for it.
    await pages.use("realm-a", chromium, local, { width: 320, height: 200 }, async () => undefined);
    expect(opened()).toBe(2);
  }, 60_000);

  it("lets a realm replace only its own sessions at the cap, and answers 429 when others hold it", async () => {
    // A node of 2 sessions, 1 a realm's share.
    const few = new Sessions(2, 1);
    const a1 = { agentId: "a1", realmId: "realm-a" };
    const a2 = { agentId: "a2", realmId: "realm-a" };
    const b1 = { agentId: "b1", realmId: "realm-b" };
    const c1 = { agentId: "c1", realmId: "realm-c" };
    try {
      await few.of(a1, chromium, local);
      await few.of(b1, chromium, local);
      // Realm A at its share: its new session takes its own older one's place, never realm B's.
      await few.of(a2, chromium, local);
      expect({ a1: few.has("a1"), a2: few.has("a2"), b1: few.has("b1") }).toEqual({
        a1: false,
        a2: true,
        b1: true,
      });
      // Realm C holds nothing it could replace: the node's cap is full of other realms' live sessions.
      await expect(few.of(c1, chromium, local)).rejects.toMatchObject({
        status: 429,
        message: expect.stringContaining("at most 2 browser sessions"),
      });
      expect(few.has("b1")).toBe(true);
      expect(few.has("a2")).toBe(true);
    } finally {
      await Promise.all(["a1", "a2", "b1", "c1"].map((agentId) => few.close(agentId)));
    }
  }, 60_000);

  it("lets a realm use free room past its share, which a realm below its share takes back at the cap", async () => {
    // A node of 3 sessions, 1 a realm's share.
    const few = new Sessions(3, 1);
    const owners = {
      a1: { agentId: "a1", realmId: "realm-a" },
      a2: { agentId: "a2", realmId: "realm-a" },
      b1: { agentId: "b1", realmId: "realm-b" },
      c1: { agentId: "c1", realmId: "realm-c" },
      d1: { agentId: "d1", realmId: "realm-d" },
    };
    const held = () => Object.keys(owners).filter((agentId) => few.has(agentId));
    try {
      await few.of(owners.a1, chromium, local);
      await few.of(owners.a2, chromium, local);
      await few.of(owners.b1, chromium, local);
      expect(held()).toEqual(["a1", "a2", "b1"]);
      // Realm C, below its share, takes the place of realm A's oldest, past A's share; never B's.
      await few.of(owners.c1, chromium, local);
      expect(held()).toEqual(["a2", "b1", "c1"]);
      // Every session now within its realm's share: realm D waits.
      await expect(few.of(owners.d1, chromium, local)).rejects.toMatchObject({ status: 429 });
      expect(held()).toEqual(["a2", "b1", "c1"]);
    } finally {
      await Promise.all(Object.keys(owners).map((agentId) => few.close(agentId)));
    }
  }, 60_000);

  it("refuses a screenshot viewport above the pixel limit, naming it", async () => {
    await env.agent();
    const refused = await env.failure("tool::browser_screenshot", {
      url: `${base}/`,
      viewport: { width: 4096, height: 4096 },
    });
    expect(refused).toMatchObject({ status: 400 });
    expect(refused.message).toContain("4194304 pixels");
  });

  it("refuses a screenshot whose PNG is above the byte limit, naming it", async () => {
    await env.agent();
    const refused = await env.failure("tool::browser_screenshot", {
      url: `${base}/noise`,
      viewport: { width: 2048, height: 2048 },
    });
    expect(refused).toMatchObject({ status: 422 });
    expect(refused.message).toContain("above the 8 MB limit");
  });

  it("counts an agent's session screenshots in the node's screenshot cap", async () => {
    const few = new ScreenshotPages(1);
    let letGo = () => {};
    const holding = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    const first = few.limit(() => holding);
    try {
      await expect(few.limit(async () => "second")).rejects.toMatchObject({
        status: 429,
        message: expect.stringContaining("at most 1 screenshots"),
      });
    } finally {
      letGo();
      await first;
    }
  });

  it("lets no page open popups of its own", async () => {
    const { context, page } = await openPage(chromium, local);
    try {
      await page.goto(`${base}/popups`);
      expect(await page.title()).toBe("opened 0");
    } finally {
      await context.close();
    }
  });

  it("hands the service none of a page's dialogs", async () => {
    const { context, page } = await openPage(chromium, local);
    let dialogs = 0;
    page.on("dialog", (dialog) => {
      dialogs++;
      void dialog.dismiss().catch(() => undefined);
    });
    try {
      await page.goto(`${base}/dialogs`);
      await vi.waitFor(async () => expect(await page.title()).toBe("done"));
      expect(dialogs).toBe(0);
    } finally {
      await context.close();
    }
  });

  it("closes a context whose page makes requests without end", async () => {
    const localOnly = { ...local, allowPrivateNetwork: false, allowedAddresses: new Set(["127.0.0.1"]) };
    const { context, page, blocked } = await openPage(chromium, localOnly);
    try {
      await page.goto(`${base}/fetch-storm`);
      await vi.waitFor(() => expect(page.isClosed()).toBe(true), { timeout: 20_000 });
      expect(blocked[0]).toBe(`The page made more than ${MAX_REQUESTS} requests within 10 s: it was closed`);
    } finally {
      await context.close();
    }
  });

  it("returns a bounded title and text, however the page patches what reads them", async () => {
    await env.agent();
    const opened = await env.tool<{ title: string }>("tool::browser_navigate", { url: `${base}/huge-title` });
    expect(opened.title).toHaveLength(1000);
    await env.tool("tool::browser_navigate", { url: `${base}/flood-text` });
    expect(await env.tool("tool::browser_read_page", { maxChars: 100 })).toMatchObject({
      title: "Flood",
      text: "z".repeat(100),
      truncated: true,
    });
    await env.tool("tool::browser_close", {});
  });
});
