import type { Readable } from "node:stream";
import { post, type UpstreamResponse } from "./http-client.ts";
import { UpstreamStatusError } from "./provider-errors.ts";

/**
 * The one way this service POSTs to a provider by itself (the pass-through and the OpenAI-wire driver;
 * the AI SDK retries its own calls): retries on 429, 5xx and connection failures, each after the
 * provider's Retry-After or else the AI SDK's backoff, all within one deadline and the caller's signal.
 */
export interface TransportRequest {
  url: URL;
  headers: Record<string, string>;
  payload: string;
  timeoutMs: number;
  /** Retries after the first attempt. */
  maxRetries: number;
  /** The caller giving up: the request goes too. */
  signal?: AbortSignal;
  /** The provider's words in an error body (e.g. OpenAI's `error.message`), for the error we raise. */
  detailOf: (body: string) => string;
}

/** A 2xx answer whose headers arrived; `done` ends it (stops the timer, aborts an unread body). */
export interface TransportCall {
  response: UpstreamResponse;
  done(): void;
}

/**
 * The provider's 2xx answer, after the retries the failures before it allow. Throws what failed, as it
 * is: an UpstreamStatusError, the connection's error, or the abort's reason (a TimeoutError at the
 * deadline): the caller words it for its provider.
 */
export async function postWithRetries(request: TransportRequest): Promise<TransportCall> {
  const { signal } = request;
  if (signal?.aborted) throw signal.reason;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(timeoutError()), request.timeoutMs);
  const giveUp = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", giveUp, { once: true });
  try {
    for (let attempt = 0; ; attempt++) {
      const outcome = await post(request.url, request.headers, request.payload, controller.signal).then(
        (response) => ({ response }),
        (error: unknown) => ({ error }),
      );
      if ("response" in outcome && (outcome.response.statusCode ?? 500) < 300) {
        const { response } = outcome;
        return {
          response,
          done: () => {
            clearTimeout(timer);
            signal?.removeEventListener("abort", giveUp);
            if (!response.body.readableEnded) controller.abort();
          },
        };
      }
      const failure =
        "response" in outcome ? await statusFailure(outcome.response, request.detailOf) : outcome.error;
      const retryable = "error" in outcome || failure instanceof RetryableStatus;
      if (!retryable || attempt >= request.maxRetries || controller.signal.aborted) throw failure;
      await sleep(retryDelay(failure, attempt), controller.signal);
    }
  } catch (error) {
    clearTimeout(timer);
    signal?.removeEventListener("abort", giveUp);
    throw controller.signal.aborted ? controller.signal.reason : error;
  }
}

/** 429 and 5xx may pass; any other status is the provider's final word. */
class RetryableStatus extends UpstreamStatusError {
  readonly retryAfterMs: number | undefined;

  constructor(statusCode: number, detail: string, retryAfterMs: number | undefined) {
    super(statusCode, detail);
    this.retryAfterMs = retryAfterMs;
  }
}

async function statusFailure(
  response: UpstreamResponse,
  detailOf: (body: string) => string,
): Promise<UpstreamStatusError> {
  const status = response.statusCode ?? 500;
  const detail = detailOf(await readAll(response.body, 4096).catch(() => ""));
  if (status !== 429 && status < 500) return new UpstreamStatusError(status, detail);
  return new RetryableStatus(status, detail, retryAfterOf(response));
}

/** `retry-after-ms`, else `retry-after` in seconds or as a date; ignored past a minute. */
export function retryAfterOf(response: Pick<UpstreamResponse, "headers">): number | undefined {
  const ms = Number(response.headers["retry-after-ms"]);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const header = response.headers["retry-after"];
  if (typeof header !== "string" || header.trim() === "") return undefined;
  const seconds = Number(header);
  const delay = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
  return Number.isFinite(delay) && delay >= 0 && delay <= 60_000 ? delay : undefined;
}

/** As the AI SDK does: the provider's Retry-After, else 2 s doubling with each attempt. */
function retryDelay(failure: unknown, attempt: number): number {
  const asked = failure instanceof RetryableStatus ? failure.retryAfterMs : undefined;
  return asked ?? 2000 * 2 ** attempt;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

function timeoutError(): Error {
  const error = new Error("The provider did not answer in time");
  error.name = "TimeoutError";
  return error;
}

/**
 * The body as text (at most about `limit` characters: past it the answer is dropped). Listeners, not an
 * async iterator: a completion's answer is read on every call, and the iterator's promises per chunk
 * cost more than the reading.
 */
export function readAll(body: Readable, limit = Number.POSITIVE_INFINITY): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const settle = (error?: Error) => {
      body.off("data", onData).off("end", onEnd).off("error", settle).off("close", onClose);
      if (error) reject(error);
      else resolve(text);
    };
    const onData = (chunk: string) => {
      text += chunk;
      if (text.length > limit) {
        settle();
        body.destroy();
      }
    };
    const onEnd = () => settle();
    const onClose = () => settle(new Error("the connection closed before the answer was complete"));
    body.setEncoding("utf8");
    body.on("data", onData).on("end", onEnd).on("error", settle).on("close", onClose);
  });
}
