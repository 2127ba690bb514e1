import type { BrowserContext, Page } from "playwright-core";
import { AppError } from "../../../shared/errors.ts";
import { GuardProxy } from "../../../shared/net/guard-proxy.ts";
import type { NetworkPolicy } from "../../../shared/net/guarded-request.ts";
import { sharedBrowser } from "./chromium.ts";
import { guardContext } from "./guard.ts";

/** A session ends after this long unused, or this long after it began, whichever comes first. */
export const SESSION_IDLE_MS = 5 * 60_000;
export const SESSION_LIFETIME_MS = 30 * 60_000;
/** Sessions one process keeps at once; the least recently used goes first. */
const MAX_SESSIONS = 16;

export interface Session {
  context: BrowserContext;
  page: Page;
  blocked: string[];
  /** The context's guarding proxy's refusals (redirect hops the routes never see). */
  refused: string[];
  startedAt: number;
  usedAt: number;
  release: () => void;
}

export const DEFAULT_VIEWPORT = { width: 1280, height: 720 };

/**
 * A fresh guarded context with one page (the caller closes it). The context has a guarding proxy of its
 * own, closed with it: the browser's only way out, and its refusals are this page's alone, never
 * another agent's or realm's (their URLs may carry secrets).
 */
export async function openPage(executablePath: string, policy: NetworkPolicy, viewport = DEFAULT_VIEWPORT) {
  const browser = await sharedBrowser.browser(executablePath);
  const proxy = new GuardProxy(policy);
  let context: BrowserContext;
  try {
    context = await browser.newContext({
      viewport,
      userAgent: "AgentOS/0.0.1",
      acceptDownloads: false,
      serviceWorkers: "block",
      // Every connection through the guarding proxy, loopback included (Chromium skips the proxy for it otherwise).
      proxy: { server: await proxy.address(), bypass: "<-loopback>" },
    });
  } catch (error) {
    await proxy.close();
    throw error;
  }
  context.once("close", () => void proxy.close());
  const { blocked } = await guardContext(context, policy);
  const page = await context.newPage();
  // The tools only ever drive this page: a popup would be a renderer nobody reads, and a page could open
  // them without end.
  context.on("page", (popup) => {
    if (popup !== page) void popup.close().catch(() => undefined);
  });
  return { context, page, blocked, refused: proxy.refused };
}

/** Each agent's browser session on this node: one context, one page, until closed or expired. */
export class Sessions {
  /** `max`: sessions kept at once (tests use a few, not a Chromium's worth). */
  private readonly max: number;
  constructor(max = MAX_SESSIONS) {
    this.max = max;
  }

  private readonly byAgent = new Map<string, Session>();
  /** Sessions being opened: an agent's calls at once share one, or the others' contexts stay open, unowned. */
  private readonly opening = new Map<string, Promise<Session>>();
  private sweeper: NodeJS.Timeout | undefined;

  async of(agentId: string, executablePath: string, policy: NetworkPolicy): Promise<Session> {
    const now = Date.now();
    const existing = this.byAgent.get(agentId);
    if (existing && !existing.page.isClosed() && now - existing.startedAt < SESSION_LIFETIME_MS) {
      existing.usedAt = now;
      return existing;
    }
    let opening = this.opening.get(agentId);
    if (!opening) {
      const closing = this.makeRoom(agentId);
      opening = this.open(agentId, executablePath, policy, closing).finally(() =>
        this.opening.delete(agentId),
      );
      this.opening.set(agentId, opening);
    }
    return opening;
  }

  /**
   * A slot for the agent's new session, taken before any await: sessions being opened count as open, or
   * calls at once would all find room and open past the cap. The agent's old session and, at the
   * cap, the least recently used one leave the map now; the closes returned finish before the new page opens.
   */
  private makeRoom(agentId: string): Promise<boolean>[] {
    const closing = this.byAgent.has(agentId) ? [this.close(agentId)] : [];
    if (this.taken() < this.max) return closing;
    const oldest = [...this.byAgent].sort(([, a], [, b]) => a.usedAt - b.usedAt)[0];
    if (!oldest)
      throw new AppError(
        "rate_limited",
        `This node keeps at most ${this.max} browser sessions, and all of them are being opened: try again in a few seconds`,
        { retryAfter: 5 },
      );
    return [...closing, this.close(oldest[0])];
  }

  /** Sessions open or being opened (one just opened is in both maps until its opening settles). */
  private taken(): number {
    let opening = 0;
    for (const agentId of this.opening.keys()) if (!this.byAgent.has(agentId)) opening++;
    return this.byAgent.size + opening;
  }

  private async open(
    agentId: string,
    executablePath: string,
    policy: NetworkPolicy,
    closing: Promise<boolean>[],
  ): Promise<Session> {
    const now = Date.now();
    await Promise.all(closing);
    const release = sharedBrowser.hold();
    try {
      const opened = await openPage(executablePath, policy);
      const session: Session = { ...opened, startedAt: now, usedAt: now, release };
      this.byAgent.set(agentId, session);
      this.sweep();
      return session;
    } catch (error) {
      release();
      throw error;
    }
  }

  has(agentId: string): boolean {
    return this.byAgent.has(agentId);
  }

  async close(agentId: string): Promise<boolean> {
    const session = this.byAgent.get(agentId);
    if (!session) return false;
    this.byAgent.delete(agentId);
    await session.context.close().catch(() => undefined);
    session.release();
    return true;
  }

  private sweep(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const [agentId, session] of this.byAgent) {
        if (now - session.usedAt > SESSION_IDLE_MS || now - session.startedAt > SESSION_LIFETIME_MS)
          void this.close(agentId);
      }
      if (this.byAgent.size === 0) {
        clearInterval(this.sweeper);
        this.sweeper = undefined;
      }
    }, 30_000);
    this.sweeper.unref();
  }
}

export const sessions = new Sessions();

/** A screenshot context serves this many screenshots (then a fresh one starts), and idles this long at most. */
const SCREENSHOT_USES = 20;
const SCREENSHOT_IDLE_MS = 60_000;
/** Screenshots one process takes at once, each on a page (a context) of its own while it runs. */
const MAX_SCREENSHOTS = 16;
/** How long a warm page may take to go back to about:blank before it is closed instead. */
const BLANK_TIMEOUT_MS = 5_000;

const blank = (page: Page): Promise<boolean> =>
  page.goto("about:blank", { timeout: BLANK_TIMEOUT_MS }).then(
    () => true,
    () => false,
  );

interface Warm {
  opened: Awaited<ReturnType<typeof openPage>>;
  uses: number;
  busy: boolean;
  usedAt: number;
  release: () => void;
}

/**
 * Screenshot pages kept warm per realm (a new page costs Chromium some 400 ms): a realm's screenshots
 * reuse one context, never another realm's, and it is replaced after SCREENSHOT_USES screenshots or
 * SCREENSHOT_IDLE_MS unused. A screenshot that finds it busy gets a page of its own, up to
 * MAX_SCREENSHOTS at once in the process (a realm's calls at once would otherwise open a context each).
 */
export class ScreenshotPages {
  /** `max`: screenshots taken at once (tests use a few, not a Chromium's worth). */
  private readonly max: number;
  constructor(max = MAX_SCREENSHOTS) {
    this.max = max;
  }

  private readonly warm = new Map<string, Warm>();
  /** Screenshots running now: counted before any await, or calls at once would all find room. */
  private running = 0;

  async use<T>(
    realm: string,
    executablePath: string,
    policy: NetworkPolicy,
    viewport: { width: number; height: number },
    work: (opened: Warm["opened"]) => Promise<T>,
  ): Promise<T> {
    if (this.running >= this.max)
      throw new AppError(
        "rate_limited",
        `This node takes at most ${this.max} screenshots at once: try again in a few seconds`,
        { retryAfter: 5 },
      );
    this.running++;
    try {
      return await this.take(realm, executablePath, policy, viewport, work);
    } finally {
      this.running--;
    }
  }

  private async take<T>(
    realm: string,
    executablePath: string,
    policy: NetworkPolicy,
    viewport: { width: number; height: number },
    work: (opened: Warm["opened"]) => Promise<T>,
  ): Promise<T> {
    let entry = this.warm.get(realm);
    if (entry && (entry.busy || entry.opened.page.isClosed())) entry = undefined;
    if (!entry) {
      const release = sharedBrowser.hold();
      const opened = await openPage(executablePath, policy, viewport).catch((error) => {
        release();
        throw error;
      });
      entry = { opened, uses: 0, busy: false, usedAt: Date.now(), release };
      if (!this.warm.has(realm)) this.warm.set(realm, entry);
    }
    const own = entry;
    own.busy = true;
    let succeeded = false;
    try {
      await own.opened.page.setViewportSize(viewport);
      const result = await work(own.opened);
      succeeded = true;
      return result;
    } finally {
      own.uses++;
      own.usedAt = Date.now();
      // A page that failed or will not leave (a script spinning, a renderer hung) would fail the realm's
      // next screenshots too: only one that is blank again stays warm.
      const kept =
        succeeded &&
        this.warm.get(realm) === own &&
        own.uses < SCREENSHOT_USES &&
        (await blank(own.opened.page));
      // Busy until blank: a screenshot taking it earlier would have its page navigated away under it.
      own.busy = false;
      if (kept) this.expireLater(realm, own);
      else await this.close(realm, own);
    }
  }

  private expireLater(realm: string, entry: Warm): void {
    setTimeout(() => {
      if (!entry.busy && Date.now() - entry.usedAt >= SCREENSHOT_IDLE_MS) void this.close(realm, entry);
    }, SCREENSHOT_IDLE_MS + 100).unref();
  }

  private async close(realm: string, entry: Warm): Promise<void> {
    if (this.warm.get(realm) === entry) this.warm.delete(realm);
    await entry.opened.context.close().catch(() => undefined);
    entry.release();
  }
}

export const screenshotPages = new ScreenshotPages();
