import { existsSync } from "node:fs";
import type { Browser } from "playwright-core";
import { AppError } from "../../../shared/errors.ts";

export const DEFAULT_BROWSER_PATH = "/usr/bin/chromium";
/** The shared browser closes after this long without a page open, so an idle service holds no Chromium. */
const IDLE_CLOSE_MS = 60_000;

/**
 * One Chromium process for the whole service process, started on first use, started again if it died,
 * and closed when idle. Pages come and go in contexts of their own.
 */
class SharedBrowser {
  private launching: Promise<Browser> | undefined;
  private users = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  /** Keeps the browser from the idle close while sessions hold pages. */
  hold(): () => void {
    this.users++;
    clearTimeout(this.idleTimer);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.users--;
      this.scheduleIdleClose();
    };
  }

  async browser(executablePath: string): Promise<Browser> {
    const current = this.launching ? await this.launching.catch(() => undefined) : undefined;
    if (current?.isConnected()) return current;
    if (!existsSync(executablePath)) {
      throw new AppError(
        "unavailable",
        `The browser tools need Chromium at ${executablePath}: run npm install as root (it installs Debian's chromium) or set AGENTOS_BROWSER_PATH`,
      );
    }
    // Loaded on first use: most processes (and every test that never opens a page) need no browser.
    const { chromium } = await import("playwright-core");
    this.launching = chromium.launch({
      executablePath,
      headless: true,
      // Root in a container has no user namespace for Chromium's sandbox; pages are confined by the SSRF routes.
      args: [
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
      ],
    });
    const browser = await this.launching.catch((error: Error) => {
      this.launching = undefined;
      throw new AppError("unavailable", `Chromium did not start: ${error.message.split("\n")[0]}`);
    });
    browser.on("disconnected", () => {
      if (this.launching) this.launching = undefined;
    });
    return browser;
  }

  private scheduleIdleClose(): void {
    if (this.users > 0) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => void this.close(), IDLE_CLOSE_MS);
    this.idleTimer.unref();
  }

  async close(): Promise<void> {
    const launching = this.launching;
    this.launching = undefined;
    const browser = await launching?.catch(() => undefined);
    await browser?.close().catch(() => undefined);
  }
}

export const sharedBrowser = new SharedBrowser();
