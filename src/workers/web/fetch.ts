import { guardedRequest, type NetworkPolicy } from "../../shared/net/guarded-request.ts";
import { decodeBody, htmlToText, isHtml } from "./html.ts";

export interface WebFetchInput {
  url: string;
  maxSize: number;
}

export interface WebFetchResult {
  url: string;
  status: number;
  contentType: string;
  content: string;
  truncated: boolean;
}

export interface FetchDeps {
  policy: NetworkPolicy;
  timeoutMs: number;
}

/** tool::web_fetch: the page as text (HTML converted), cut at maxSize bytes. */
export async function webFetch(
  input: WebFetchInput,
  deps: FetchDeps,
  signal?: AbortSignal,
): Promise<WebFetchResult> {
  const response = await guardedRequest(input.url, {
    maxBytes: input.maxSize,
    timeoutMs: deps.timeoutMs,
    policy: deps.policy,
    signal,
  });
  const contentType = response.headers["content-type"] ?? "";
  const text = decodeBody(response.body, contentType, response.truncated);
  return {
    url: response.url,
    status: response.status,
    contentType,
    content: isHtml(contentType) ? htmlToText(text) : text,
    truncated: response.truncated,
  };
}
