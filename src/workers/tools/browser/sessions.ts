import type { BrowserContext, Page } from "playwright-core";
import { AppError } from "../../../shared/errors.ts";
import { GuardProxy } from "../../../shared/net/guard-proxy.ts";
import type { NetworkPolicy } from "../../../shared/net/guarded-request.ts";
import { sharedBrowser } from "./chromium.ts";
import { guardContext } from "./guard.ts";

/** A session ends after this long unused, or this long after it began, whichever comes first. */
export const SESSION_IDLE_MS = 5 * 60_000;
export const SESSION_LIFETIME_MS = 30 * 60_000;
/** Sessions one process keeps at once, and how many of them each realm is sure of (see Sessions). */
const MAX_SESSIONS = 16;
const MAX_SESSIONS_PER_REALM = 4;

export interface Session {
  context: BrowserContext;
  page: Page;
  blocked: string[];
  /** The context's guarding proxy's refusals (redirect hops the routes never see). */
  refused: string[];
  realmId: string;
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

/** Whose session it is: the agent, and the realm whose share of the node it counts in. */
export interface Owner {
  agentId: string;
  realmId: string;
}

/**
 * Each agent's browser session on this node: one context, one page, until closed or expired.
 *
 * Fairness between realms: each realm is sure of `share` of the node's `max` sessions, and may hold
 * more while the node has room. When the node is full, a new session replaces the least recently used
 * session of its own realm if the realm holds its share or more, else that of a realm holding more
 * than its share. So no realm can close another realm's sessions within that realm's share; when every
 * session is within its realm's share (max/share realms busy at once), a realm below its share is
 * answered 429 naming the cap until one is closed or expires (SESSION_IDLE_MS unused).
 */
export class Sessions {
  /** `max`: sessions kept at once; `share`: what each realm is sure of (tests use a few, not a Chromium's worth). */
  private readonly max: number;
  private readonly share: number;
  constructor(max = MAX_SESSIONS, share = MAX_SESSIONS_PER_REALM) {
    this.max = max;
    this.share = share;
  }

  private readonly byAgent = new Map<string, Session>();
  /** Sessions being opened: an agent's calls at once share one, or the others' contexts stay open, unowned. */
  private readonly opening = new Map<string, { realmId: string; session: Promise<Session> }>();
  private sweeper: NodeJS.Timeout | undefined;

  async of(owner: Owner, executablePath: string, policy: NetworkPolicy): Promise<Session> {
    const { agentId } = owner;
    const now = Date.now();
    const existing = this.byAgent.get(agentId);
    if (existing && !existing.page.isClosed() && now - existing.startedAt < SESSION_LIFETIME_MS) {
      existing.usedAt = now;
      return existing;
    }
    let opening = this.opening.get(agentId)?.session;
    if (!opening) {
      const closing = this.makeRoom(owner);
      opening = this.open(owner, executablePath, policy, closing).finally(() => this.opening.delete(agentId));
      this.opening.set(agentId, { realmId: owner.realmId, session: opening });
    }
    return opening;
  }

  /**
   * A slot for the agent's new session, taken before any await: sessions being opened count as open, or
   * calls at once would all find room and open past the cap. The agent's old session and, when the node
   * is full, the least recently used one the rule above picks leave the map now; the closes returned
   * finish before the new page opens.
   */
  private makeRoom({ agentId, realmId }: Owner): Promise<boolean>[] {
    const closing = this.byAgent.has(agentId) ? [this.close(agentId)] : [];
    if (this.taken() < this.max) return closing;
    const open = [...this.byAgent].sort(([, a], [, b]) => a.usedAt - b.usedAt);
    const own = open.filter(([, session]) => session.realmId === realmId);
    // Below its share, a realm takes back room others hold past theirs; else (or if none do) its own.
    const pastShare =
      this.taken(realmId) < this.share
        ? open.filter(
            ([, session]) => session.realmId !== realmId && this.taken(session.realmId) > this.share,
          )
        : [];
    const oldest = pastShare[0] ?? own[0];
    if (!oldest) {
      const why =
        this.taken(realmId) > 0
          ? `and your realm's ${this.taken(realmId)} are all being opened`
          : "all held by other realms' agents within their shares";
      throw new AppError(
        "rate_limited",
        `This node keeps at most ${this.max} browser sessions (each realm sure of ${this.share}), ${why}: close one with browser_close, or try again later`,
        { retryAfter: 30 },
      );
    }
    return [...closing, this.close(oldest[0])];
  }

  /** Sessions open or being opened, the realm's or all (one just opened is in both maps until its opening settles). */
  private taken(realmId?: string): number {
    let count = 0;
    for (const session of this.byAgent.values())
      if (realmId === undefined || session.realmId === realmId) count++;
    for (const [agentId, opening] of this.opening)
      if (!this.byAgent.has(agentId) && (realmId === undefined || opening.realmId === realmId)) count++;
    return count;
  }

  private async open(
    { agentId, realmId }: Owner,
    executablePath: string,
    policy: NetworkPolicy,
    closing: Promise<boolean>[],
  ): Promise<Session> {
    const now = Date.now();
    await Promise.all(closing);
    const release = sharedBrowser.hold();
    try {
      const opened = await openPage(executablePath, policy);
      const session: Session = { ...opened, realmId, startedAt: now, usedAt: now, release };
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
