import { z } from "zod";
import { AppError, badRequest, isAppError } from "../../../shared/errors.ts";
import { assertUrlAllowed } from "../../../shared/net/guarded-request.ts";
import { agentIdField } from "../fields.ts";
import { defineTool, type ToolContext } from "../tool.ts";
import { DEFAULT_BROWSER_PATH } from "./chromium.ts";
import { navigationError } from "./guard.ts";
import { PAGE_BUSY, pageTitle, readPage } from "./read.ts";
import { capture, MAX_SCREENSHOT_PIXELS, MAX_VIEWPORT, screenshotPages } from "./screenshots.ts";
import { DEFAULT_VIEWPORT, type Session, sessions } from "./sessions.ts";

const MAX_TIMEOUT_MS = 60_000;
const timeoutMs = z
  .number()
  .int()
  .min(100)
  .max(MAX_TIMEOUT_MS)
  .default(15_000)
  .describe("How long to wait, in ms (default 15000)");
const url = z.string().min(1).max(8192).describe("http(s) URL");
const selector = z
  .string()
  .min(1)
  .max(2000)
  .describe("CSS selector (or text=…, role=… as Playwright reads them)");

const browserPath = (ctx: ToolContext) => ctx.env.AGENTOS_BROWSER_PATH?.trim() || DEFAULT_BROWSER_PATH;

type Opened = Pick<Session, "page" | "blocked" | "refused">;

/** Only refusals from here on explain what the next step runs into: earlier ones were another page's. */
function forgetRefusals(opened: Opened): void {
  opened.blocked.length = 0;
  opened.refused.length = 0;
}

/** A session whose page stopped answering is closed: its script would keep a CPU busy until the session expires. */
async function closingIfBusy<T>(agentId: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!isAppError(error) || error.reason !== PAGE_BUSY) throw error;
    await sessions.close(agentId);
    throw new AppError("unprocessable", `${error.message}; your browser session was closed`);
  }
}

async function navigate(opened: Opened, target: string, ctx: ToolContext, timeout: number) {
  await assertUrlAllowed(target, ctx.policy);
  const { page } = opened;
  forgetRefusals(opened);
  let status: number | null;
  try {
    status = (await page.goto(target, { waitUntil: "load", timeout }))?.status() ?? null;
  } catch (error) {
    throw navigationError(error, target, [...opened.blocked, ...opened.refused], timeout);
  }
  return { url: page.url(), status, title: await pageTitle(page, timeout) };
}

/** A selector that never appears is an error the model can read, not a hang. */
async function onElement<T>(work: () => Promise<T>, what: string, timeout: number): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const message = (error as Error).message ?? "";
    if (/Timeout/i.test(message))
      throw new AppError("unprocessable", `No element matches ${what} within ${timeout} ms`);
    throw new AppError("unprocessable", `${what}: ${message.split("\n")[0]}`);
  }
}

/** The agent's session, after the caller's access to the agent; it counts in the agent's realm's share. */
async function session(ctx: ToolContext, agentId: string): Promise<Session> {
  const { realmId } = await ctx.agent(agentId);
  return sessions.of({ agentId, realmId }, browserPath(ctx), ctx.policy);
}

/** The agent's open session, or a 400 saying what to do first (after the caller's access to the agent). */
async function openSession(ctx: ToolContext, agentId: string, missing: string): Promise<Session> {
  // The access first: whether another realm's agent has a page open is not the caller's business.
  const { realmId } = await ctx.agent(agentId);
  if (!sessions.has(agentId)) throw badRequest(missing);
  return sessions.of({ agentId, realmId }, browserPath(ctx), ctx.policy);
}

const MEGAPIXELS = MAX_SCREENSHOT_PIXELS / 2 ** 20;

const browserScreenshot = defineTool({
  id: "tool::browser_screenshot",
  actsFor: "agent",
  description: `Screenshot a web page in a real browser: {screenshot: base64 PNG, width, height, url}. viewport {width, height} (default 1280×720, at most ${MAX_SCREENSHOT_PIXELS} pixels, e.g. 2048×2048), fullPage for the whole page (cut at ${MEGAPIXELS} megapixels' worth of height). A PNG above 8 MB is refused. Without url, your open browser session's page.`,
  input: z.strictObject({
    url: url.optional(),
    agentId: agentIdField.optional(),
    viewport: z
      .strictObject({
        width: z.number().int().min(100).max(MAX_VIEWPORT),
        height: z.number().int().min(100).max(MAX_VIEWPORT),
      })
      .default(DEFAULT_VIEWPORT),
    fullPage: z.boolean().default(false),
    timeoutMs,
  }),
  async run({ url: target, agentId, viewport, fullPage, timeoutMs: timeout }, ctx) {
    if (target === undefined) {
      const missing = "give url (or open a page with browser_navigate first)";
      if (!agentId) throw badRequest(missing);
      const { page } = await openSession(ctx, agentId, missing);
      const png = await screenshotPages.limit(() => capture(page, fullPage, timeout));
      return { screenshot: png.toString("base64"), url: page.url(), ...page.viewportSize() };
    }
    if (viewport.width * viewport.height > MAX_SCREENSHOT_PIXELS)
      throw badRequest(
        `viewport ${viewport.width}×${viewport.height} is above the ${MAX_SCREENSHOT_PIXELS} pixels (${MEGAPIXELS} megapixels) a screenshot may have: make it smaller`,
      );
    const realm = ctx.call.auth.kind === "realm" ? ctx.call.auth.realmId : "*";
    return screenshotPages.use(realm, browserPath(ctx), ctx.policy, viewport, async (opened) => {
      const loaded = await navigate(opened, target, ctx, timeout);
      const png = await capture(opened.page, fullPage, timeout);
      return {
        screenshot: png.toString("base64"),
        url: loaded.url,
        width: viewport.width,
        height: viewport.height,
      };
    });
  },
});

const actions = ["navigate", "click", "type", "wait"] as const;

async function perform(
  ctx: ToolContext,
  input: {
    agentId: string;
    action: (typeof actions)[number];
    url?: string;
    selector?: string;
    text?: string;
    submit?: boolean;
    timeoutMs: number;
  },
) {
  const opened = await session(ctx, input.agentId);
  const { page, blocked } = opened;
  const timeout = input.timeoutMs;
  switch (input.action) {
    case "navigate":
      if (!input.url) throw badRequest("navigate needs url");
      return { action: "navigate", ...(await navigate(opened, input.url, ctx, timeout)) };
    case "click": {
      if (!input.selector) throw badRequest("click needs selector");
      const target = input.selector;
      forgetRefusals(opened);
      await onElement(() => page.click(target, { timeout }), target, timeout);
      await page.waitForLoadState("load", { timeout }).catch(() => undefined);
      if (blocked.length > 0 && page.url() === "about:blank")
        throw new AppError("validation", blocked[0] as string);
      return {
        action: "click",
        selector: target,
        url: page.url(),
        title: await pageTitle(page, timeout),
      };
    }
    case "type": {
      if (!input.selector || input.text === undefined) throw badRequest("type needs selector and text");
      const target = input.selector;
      await onElement(() => page.fill(target, input.text as string, { timeout }), target, timeout);
      if (input.submit) await onElement(() => page.press(target, "Enter", { timeout }), target, timeout);
      return { action: "type", selector: target, typed: (input.text as string).length, url: page.url() };
    }
    case "wait":
      if (input.selector) {
        const target = input.selector;
        await onElement(() => page.waitForSelector(target, { timeout, state: "visible" }), target, timeout);
        return { action: "wait", selector: target, found: true };
      }
      await page.waitForTimeout(timeout);
      return { action: "wait", waitedMs: timeout };
  }
}

const act = (ctx: ToolContext, input: Parameters<typeof perform>[1]) =>
  closingIfBusy(input.agentId, () => perform(ctx, input));

const sessionInput = { agentId: agentIdField, timeoutMs };

const browserAction = defineTool({
  id: "tool::browser_action",
  actsFor: "agent",
  description:
    "Drive your browser session's page: action navigate (url), click (selector), type (selector, text; submit presses Enter), wait (for selector, or timeoutMs). Every request the page makes passes the SSRF rule.",
  input: z.strictObject({
    ...sessionInput,
    action: z.enum(actions),
    url: url.optional(),
    selector: selector.optional(),
    text: z.string().max(100_000).optional(),
    submit: z.boolean().default(false),
  }),
  run: (input, ctx) => act(ctx, input),
});

const browserNavigate = defineTool({
  id: "tool::browser_navigate",
  actsFor: "agent",
  description:
    "Open a URL in your browser session (one page per agent, kept between calls): {url, status, title}.",
  input: z.strictObject({ ...sessionInput, url }),
  run: (input, ctx) => act(ctx, { ...input, action: "navigate" }),
});

const browserClick = defineTool({
  id: "tool::browser_click",
  actsFor: "agent",
  description: "Click the element matching selector on your session's page: {url, title} afterwards.",
  input: z.strictObject({ ...sessionInput, selector }),
  run: (input, ctx) => act(ctx, { ...input, action: "click" }),
});

const browserType = defineTool({
  id: "tool::browser_type",
  actsFor: "agent",
  description: "Type text into the field matching selector on your session's page (submit presses Enter).",
  input: z.strictObject({
    ...sessionInput,
    selector,
    text: z.string().max(100_000),
    submit: z.boolean().default(false),
  }),
  run: (input, ctx) => act(ctx, { ...input, action: "type" }),
});

const browserReadPage = defineTool({
  id: "tool::browser_read_page",
  actsFor: "agent",
  description: "The visible text of your session's page: {url, title, text, truncated}.",
  input: z.strictObject({
    agentId: agentIdField,
    maxChars: z.number().int().min(100).max(500_000).default(50_000),
    timeoutMs,
  }),
  async run({ agentId, maxChars, timeoutMs: timeout }, ctx) {
    const { page } = await openSession(ctx, agentId, "No page is open: use browser_navigate first");
    return closingIfBusy(agentId, async () => {
      const { title, text, length } = await readPage(page, maxChars, timeout);
      return { url: page.url(), title, text, truncated: length > maxChars };
    });
  },
});

const browserClose = defineTool({
  id: "tool::browser_close",
  actsFor: "agent",
  description: "Close your browser session: {closed}.",
  input: z.strictObject({ agentId: agentIdField }),
  async run({ agentId }, ctx) {
    await ctx.agent(agentId);
    return { closed: await sessions.close(agentId) };
  },
});

export const browserTools = [
  browserScreenshot,
  browserAction,
  browserNavigate,
  browserClick,
  browserType,
  browserReadPage,
  browserClose,
];
