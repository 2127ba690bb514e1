import { existsSync } from "node:fs";
import type { Browser } from "playwright-core";
import { AppError } from "../../../shared/errors.ts";
import { chromiumLaunch, launchError } from "./launcher.ts";

export const DEFAULT_BROWSER_PATH = "/usr/bin/chromium";
/** The shared browser closes after this long without a page open, so an idle service holds no Chromium. */
const IDLE_CLOSE_MS = 60_000;

/** Chromium started as launcher.ts says: sandboxed, and as a user of its own when the service is root. */
async function launch(executablePath: string): Promise<Browser> {
  // Loaded on first use: most processes (and every test that never opens a page) need no browser.
  const { chromium } = await import("playwright-core");
  const how = await chromiumLaunch(executablePath);
  try {
    return await chromium.launch({
      executablePath: how.executablePath,
      chromiumSandbox: how.chromiumSandbox,
      env: how.env,
      headless: true,
      // Playwright turns Chromium's popup blocker off; on, a page's window.open without a user gesture
      // answers null instead of starting a window (a page could otherwise open them without end).
      ignoreDefaultArgs: ["--disable-popup-blocking"],
      args: [
        "--disable-dev-shm-usage",
        "--disable-gpu",
        // No SwiftShader (so no WebGL): the GPU process can then take its seccomp sandbox, which fails with it.
        "--disable-software-rasterizer",
        "--no-first-run",
        "--no-default-browser-check",
        // WebRTC sends its STUN/TURN and media over UDP, which never passes the guarding proxy (sessions.ts):
        // a page could reach loopback, private and metadata addresses over it (UDP scans, SSRF). This
        // policy keeps WebRTC to connections through the proxy, so no UDP at all. It is the switch behind
        // the WebRtcIPHandling enterprise policy; --force-webrtc-ip-handling-policy is no longer read by
        // Chromium (156 ignores it). Pages get no WebRTC either (guard.ts); this holds if that is bypassed.
        "--webrtc-ip-handling-policy=disable_non_proxied_udp",
      ],
    });
  } catch (error) {
    throw launchError(error as Error, executablePath, how);
  } finally {
    await how.done();
  }
}

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
    // Set before any await, so that callers at the same time share one launch.
    this.launching = launch(executablePath);
    const browser = await this.launching.catch((error: AppError) => {
      this.launching = undefined;
      throw error;
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
