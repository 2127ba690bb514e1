import type { Platform } from "../../channels/platform.ts";

export interface SendContext {
  /** The platform's API base URL (`<PLATFORM>_API_BASE_URL` overrides it, for tests and proxies). */
  baseUrl: string;
  /** The outbound credential from the vault (the platform's `vault.token`), if it has one. */
  token?: string;
}

/** How a reply reaches one platform: its API's address and the call that posts one part of a reply. */
export interface Sender {
  defaultBaseUrl: string;
  send(context: SendContext, replyTo: Record<string, unknown>, text: string): Promise<void>;
}

/**
 * A platform as the pipeline uses it: its pure definition (src/channels) and its sender. Everything
 * else (secrets, dedupe, bindings, the durable reply queue, audit) is the pipeline's, written once.
 */
export type Adapter = Platform & Sender;

/** A JSON POST to a platform API; a non-2xx answer is an error naming the status and the start of the body. */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<unknown> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  if (!response.ok)
    throw new Error(`${new URL(url).host} answered ${response.status}: ${text.slice(0, 300)}`);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
