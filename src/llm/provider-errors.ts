import { APICallError } from "ai";
import { AppError, isAppError } from "../shared/errors.ts";
import { urlWithoutSecrets } from "../shared/net/url-without-secrets.ts";
import type { ModelEntry, ProviderEntry } from "./types.ts";

/** Which model of which provider a failure concerns. */
export interface ProviderTarget {
  model: Pick<ModelEntry, "id">;
  provider: Pick<ProviderEntry, "id" | "local">;
}

/** A provider's non-2xx answer, as the pass-through sees it (the AI SDK's calls throw APICallError). */
export class UpstreamStatusError extends Error {
  readonly statusCode: number;
  /** What the provider said (its error message), kept short. */
  readonly detail: string;

  constructor(statusCode: number, detail: string) {
    super(`HTTP ${statusCode}${detail ? `: ${detail}` : ""}`);
    this.name = "UpstreamStatusError";
    this.statusCode = statusCode;
    this.detail = detail;
  }
}

/** A provider failure as our error: which provider, what it said, and what to do about it. */
export function providerError(choice: ProviderTarget, baseUrl: string, error: unknown): AppError {
  if (isAppError(error)) return error;
  const id = choice.provider.id;
  const apiError = findApiCallError(error);
  const status =
    apiError?.statusCode ?? (error instanceof UpstreamStatusError ? error : undefined)?.statusCode;
  if (status === 401 || status === 403) {
    return new AppError("upstream", `Provider ${id} rejected the API key (HTTP ${status})`, { cause: error });
  }
  if (status) {
    const detail = error instanceof UpstreamStatusError && error.detail ? `: ${error.detail}` : "";
    return new AppError(
      "upstream",
      `Provider ${id} answered HTTP ${status} for model ${choice.model.id}${detail}`,
      {
        cause: error,
      },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  if (/abort|timeout|timed out/i.test(`${(error as Error)?.name} ${message}`)) {
    return new AppError("timeout", `Provider ${id} did not answer in time (model ${choice.model.id})`, {
      cause: error,
    });
  }
  if (apiError || isNetworkError(error)) {
    const hint = choice.provider.local ? ` (is it running? set ${id.toUpperCase()}_BASE_URL)` : "";
    return new AppError(
      "upstream",
      `Provider ${id} is unreachable at ${urlWithoutSecrets(baseUrl)}: ${message}${hint}`,
      {
        cause: error,
      },
    );
  }
  // The provider answered, but not usably (e.g. no call of a required tool, an unreadable reply).
  return new AppError(
    "upstream",
    `Provider ${id} gave no usable answer for model ${choice.model.id}: ${message}`,
    {
      cause: error,
    },
  );
}

/** A failure to reach the provider at all (refused, unresolvable, reset), anywhere in the cause chain. */
function isNetworkError(error: unknown): boolean {
  for (const current of causes(error, 6)) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === "string" && /^(ECONN|ENOTFOUND|EAI_|EHOST|ENETUNREACH|UND_ERR)/.test(code))
      return true;
    if (typeof message === "string" && /fetch failed|Cannot connect/i.test(message)) return true;
  }
  return false;
}

function findApiCallError(error: unknown): APICallError | undefined {
  for (const current of causes(error, 5)) if (APICallError.isInstance(current)) return current;
  return undefined;
}

/** An error and what it wraps (the AI SDK's RetryError keeps `lastError`, others `cause`), `max` deep. */
function* causes(error: unknown, max: number): Generator<unknown> {
  let current = error;
  for (let depth = 0; depth < max && current; depth++) {
    yield current;
    const next = current as { lastError?: unknown; cause?: unknown };
    current = next.lastError ?? next.cause;
  }
}
