import type { Page } from "playwright-core";
import { AppError } from "../../../shared/errors.ts";
import type { NetworkPolicy } from "../../../shared/net/guarded-request.ts";
import { sharedBrowser } from "./chromium.ts";
import { DEFAULT_VIEWPORT, openPage } from "./sessions.ts";

export const MAX_VIEWPORT = 4096;
/**
 * Pixels one screenshot may have (4 Mpx: 2048×2048, 4096×1024, or a full page cut at that height). A
 * PNG of pixels that do not compress is 4 bytes each: a 4096×4096 viewport of noise made a 50 MB PNG,
 * some 120 MB in the service with its base64.
 */
export const MAX_SCREENSHOT_PIXELS = 4096 * 1024;
/** A PNG above this is refused: what the model gets back stays within some 11 MB of base64. */
export const MAX_SCREENSHOT_BYTES = 8 * 1024 * 1024;

/** A screenshot context serves this many screenshots (then a fresh one starts), and idles this long at most. */
const SCREENSHOT_USES = 20;
const SCREENSHOT_IDLE_MS = 60_000;
/** Screenshots one process takes at once, each on a page (a context) of its own while it runs. */
const MAX_SCREENSHOTS = 16;
/**
 * Idle warm pages one process keeps, the least recently used closed first: a warm page per realm
 * would otherwise let many realms leave a context each open. With MAX_SCREENSHOTS and the sessions'
 * cap, this bounds every context the node's browser holds.
 */
const MAX_WARM = 4;
/** How long a warm page may take to go back to about:blank before it is closed instead. */
const BLANK_TIMEOUT_MS = 5_000;

const blank = (page: Page): Promise<boolean> =>
  page.goto("about:blank", { timeout: BLANK_TIMEOUT_MS }).then(
    () => true,
    () => false,
  );

/**
 * The page as PNG, in CSS pixels (never the device's), cut at MAX_SCREENSHOT_PIXELS and refused above
 * MAX_SCREENSHOT_BYTES; a page Chromium cannot capture (crashed, too slow) is a 422, not a 500.
 */
export async function capture(page: Page, fullPage: boolean, timeout: number): Promise<Buffer> {
  const { width, height } = page.viewportSize() ?? DEFAULT_VIEWPORT;
  // The viewport is ours (screenshot input, or the session's default); the clip holds whatever it is.
  const clip = fullPage
    ? { x: 0, y: 0, width, height: Math.floor(MAX_SCREENSHOT_PIXELS / width) }
    : { x: 0, y: 0, width, height: Math.min(height, Math.floor(MAX_SCREENSHOT_PIXELS / width)) };
  let png: Buffer;
  try {
    png = await page.screenshot({ fullPage, timeout, type: "png", scale: "css", clip });
  } catch (error) {
    const message = (error as Error).message ?? String(error);
    if (/Timeout/i.test(message))
      throw new AppError("unprocessable", `The page did not render within ${timeout} ms`);
    throw new AppError("unprocessable", `Could not screenshot ${page.url()}: ${message.split("\n")[0]}`);
  }
  if (png.length > MAX_SCREENSHOT_BYTES)
    throw new AppError(
      "unprocessable",
      `The screenshot is ${(png.length / 2 ** 20).toFixed(1)} MB as PNG, above the ${MAX_SCREENSHOT_BYTES / 2 ** 20} MB limit: take a smaller viewport${fullPage ? " or no fullPage" : ""}`,
    );
  return png;
}

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
 * SCREENSHOT_IDLE_MS unused; at most MAX_WARM stay warm. A screenshot that finds it busy gets a page
 * of its own, up to MAX_SCREENSHOTS at once in the process (a realm's calls at once would otherwise
 * open a context each); screenshots of sessions' pages count in that cap too.
 */
export class ScreenshotPages {
  /** `max`: screenshots taken at once; `maxWarm`: idle pages kept (tests use a few, not a Chromium's worth). */
  private readonly max: number;
  private readonly maxWarm: number;
  constructor(max = MAX_SCREENSHOTS, maxWarm = MAX_WARM) {
    this.max = max;
    this.maxWarm = maxWarm;
  }

  private readonly warm = new Map<string, Warm>();
  /** Screenshots running now: counted before any await, or calls at once would all find room. */
  private running = 0;

  /** Runs one screenshot's work in the node's cap (each holds a PNG of up to MAX_SCREENSHOT_BYTES). */
  async limit<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.max)
      throw new AppError(
        "rate_limited",
        `This node takes at most ${this.max} screenshots at once: try again in a few seconds`,
        { retryAfter: 5 },
      );
    this.running++;
    try {
      return await work();
    } finally {
      this.running--;
    }
  }

  use<T>(
    realm: string,
    executablePath: string,
    policy: NetworkPolicy,
    viewport: { width: number; height: number },
    work: (opened: Warm["opened"]) => Promise<T>,
  ): Promise<T> {
    return this.limit(() => this.take(realm, executablePath, policy, viewport, work));
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
      if (kept) {
        this.expireLater(realm, own);
        await this.trim();
      } else await this.close(realm, own);
    }
  }

  /** Closes the least recently used idle warm pages beyond maxWarm (busy ones are in their screenshot's hands). */
  private async trim(): Promise<void> {
    const idle = [...this.warm]
      .filter(([, entry]) => !entry.busy)
      .sort(([, a], [, b]) => a.usedAt - b.usedAt);
    const extra = this.warm.size - this.maxWarm;
    await Promise.all(idle.slice(0, Math.max(0, extra)).map(([realm, entry]) => this.close(realm, entry)));
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
