import type { BrowserContext } from "playwright-core";
import { AppError, isAppError } from "../../../shared/errors.ts";
import { assertUrlAllowed, type NetworkPolicy } from "../../../shared/net/guarded-request.ts";

const INERT = /^(data|blob|about):/;
/** Refusals kept per context: the first explain a failure, and a page could otherwise grow the list without end. */
const MAX_BLOCKED = 50;
/**
 * Requests (WebSockets included) a context's pages may make within REQUEST_WINDOW_MS; past it the context
 * is closed. Each request passes the service's event loop (this route, the guarding proxy), which every
 * realm shares: a page firing fetches in a loop kept a fifth of a core busy, so a few such pages would
 * stall the node. A heavy page makes a few hundred while it loads.
 */
export const MAX_REQUESTS = 1000;
const REQUEST_WINDOW_MS = 10_000;

/**
 * Removes WebRTC from every realm of a page: RTCPeerConnection, webkitRTCPeerConnection, RTCDataChannel,
 * RTCIceCandidate, RTCSessionDescription and every other RTC* interface. WebRTC's STUN/TURN and media go
 * over UDP, which bypasses the guarding proxy, and nothing the agent needs uses it. An init script runs
 * in every frame's new document before the page's own scripts (about:blank, srcdoc and data: iframes and
 * popups included), so a page cannot take the interfaces back from a fresh iframe.
 */
const NO_WEBRTC = `(() => {
  for (const name of Object.getOwnPropertyNames(globalThis))
    if (/^(webkit)?RTC/.test(name)) delete globalThis[name];
})();`;

/**
 * Makes alert, confirm and prompt answer at once in every frame, as a dismissed dialog does. Each dialog
 * otherwise travels to the service, which dismisses it: a page looping over alert() would keep the
 * service's event loop busy for as long as its session lasts.
 */
const NO_DIALOGS = `(() => {
  const answers = { alert: undefined, confirm: false, prompt: null };
  for (const [name, answer] of Object.entries(answers))
    Object.defineProperty(globalThis, name, { value: () => answer, writable: true, configurable: true });
})();`;

/**
 * Every request the context's pages make (navigations, redirects, subresources, fetches, WebSockets)
 * passes the SSRF rule first; a blocked one is aborted and remembered, so the tool can name it with the
 * rule's own message. The pages get no WebRTC (NO_WEBRTC), whose UDP the proxy would never see, and no
 * dialogs (NO_DIALOGS).
 */
export async function guardContext(
  context: BrowserContext,
  policy: NetworkPolicy,
): Promise<{ blocked: string[] }> {
  const blocked: string[] = [];
  await context.addInitScript(NO_WEBRTC + NO_DIALOGS);
  let windowStart = Date.now();
  let requests = 0;
  let closed = false;
  /** Counts a request; false once the context is over its budget (and then closes it, first in `blocked`). */
  const withinBudget = (): boolean => {
    if (closed) return false;
    const now = Date.now();
    if (now - windowStart > REQUEST_WINDOW_MS) [windowStart, requests] = [now, 0];
    if (++requests <= MAX_REQUESTS) return true;
    closed = true;
    blocked.unshift(
      `The page made more than ${MAX_REQUESTS} requests within ${REQUEST_WINDOW_MS / 1000} s: it was closed`,
    );
    void context.close().catch(() => undefined);
    return false;
  };
  const check = async (url: string): Promise<boolean> => {
    if (!withinBudget()) return false;
    if (INERT.test(url)) return true;
    try {
      await assertUrlAllowed(url.replace(/^ws(s?):/, "http$1:"), policy);
      return true;
    } catch (error) {
      if (blocked.length < MAX_BLOCKED)
        blocked.push(isAppError(error) ? error.message : `${url}: ${(error as Error).message}`);
      return false;
    }
  };
  await context.route("**/*", async (route) => {
    // An early, well-worded refusal; the context's proxy enforces the rule on every connection anyway
    // (redirect hops never reach this route).
    if (await check(route.request().url())) await route.continue().catch(() => undefined);
    else await route.abort("blockedbyclient").catch(() => undefined);
  });
  await context.routeWebSocket(/.*/, async (ws) => {
    if (await check(ws.url())) ws.connectToServer();
    else await ws.close({ code: 1008, reason: "blocked by the SSRF rule" });
  });
  return { blocked };
}

/**
 * The error for a navigation that failed: the SSRF rule's message when the rule blocked it. `blocked`
 * holds every refusal of the page's routes and of its own proxy during the navigation, so a network
 * error without one is the site's (a closed port, a dropped connection), not the rule's.
 */
export function navigationError(error: unknown, url: string, blocked: string[], timeoutMs: number): AppError {
  if (isAppError(error)) return error;
  const message = (error as Error).message ?? String(error);
  if (blocked.length > 0) return new AppError("validation", blocked[0] as string);
  if (/Timeout/i.test(message))
    return new AppError("unprocessable", `${url} did not load within ${timeoutMs} ms`);
  return new AppError("unprocessable", `${url} could not be loaded: ${message.split("\n")[0]}`);
}
