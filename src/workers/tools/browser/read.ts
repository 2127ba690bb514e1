import type { Page } from "playwright-core";
import { AppError, isAppError } from "../../../shared/errors.ts";

export const PAGE_BUSY = "page_busy";
/** A title is a label: a page could otherwise set one of many MB, and every step's answer carries it. */
export const MAX_TITLE_CHARS = 1000;

/**
 * A read from the page, bounded in time: evaluate and title have no timeout of their own, and a page
 * whose script never yields would hold the call until the engine gives up on it.
 */
export async function fromPage<T>(read: Promise<T>, timeout: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new AppError(
            "unprocessable",
            `The page did not answer within ${timeout} ms: a script on it keeps it busy`,
            { reason: PAGE_BUSY },
          ),
        ),
      timeout,
    );
  });
  try {
    return await Promise.race([read, late]);
  } finally {
    clearTimeout(timer);
  }
}

interface Read {
  title: string;
  text: string;
  /** The whole text's length, of which `text` is the first maxChars. */
  length: number;
}

/**
 * Cuts a string in the page with nothing a page's script can replace: typeof, a primitive string's
 * length and indexes, and +. String.prototype.slice would do, but a page could make it return everything.
 */
const CUT = `(value, max) => {
  if (typeof value !== "string") return "";
  let out = "";
  for (let i = 0; i < value.length && i < max; i++) out += value[i];
  return out;
}`;

/**
 * The page's title and visible text, cut in the page: only what the tool returns crosses to the service
 * (a page's text or title can be hundreds of MB, all of which page.title() or innerText would bring).
 * A page may answer anything here (it could patch innerText), as it may show anything: only the size counts.
 */
function evaluateCut(page: Page, maxChars: number): Promise<Read> {
  // A string, run in the page where `document` exists: the service needs no DOM types.
  return page.evaluate(`(() => {
    const cut = ${CUT};
    const text = document.body ? document.body.innerText : "";
    return {
      title: cut(document.title, ${MAX_TITLE_CHARS}),
      text: cut(text, ${maxChars}),
      length: typeof text === "string" ? text.length : 0,
    };
  })()`) as Promise<Read>;
}

/** A read within `timeout`; a page that went away meanwhile (it navigated, it crashed) is a 422. */
async function reading<T>(page: Page, read: Promise<T>, timeout: number): Promise<T> {
  try {
    return await fromPage(read, timeout);
  } catch (error) {
    if (isAppError(error)) throw error;
    const message = (error as Error).message ?? String(error);
    throw new AppError("unprocessable", `Could not read ${page.url()}: ${message.split("\n")[0]}`);
  }
}

/** The page's title and its first maxChars of text. */
export const readPage = (page: Page, maxChars: number, timeout: number): Promise<Read> =>
  reading(page, evaluateCut(page, maxChars), timeout);

/** The page's title, cut at MAX_TITLE_CHARS in the page. */
export async function pageTitle(page: Page, timeout: number): Promise<string> {
  const read = page.evaluate(`(${CUT})(document.title, ${MAX_TITLE_CHARS})`);
  const title = await reading(page, read, timeout);
  return typeof title === "string" ? title : "";
}
