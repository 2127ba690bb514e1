import type { Principal, TriggerFn } from "../../engine/types.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { accountOf, costEvent, recordCost } from "../../llm/cost-event.ts";
import { assertMaySpend } from "../../llm/guards.ts";
import {
  DEFAULT_TIMEOUT_MS,
  guardedRequest,
  type NetworkPolicy,
  policyForCaller,
  type Resolver,
  systemResolver,
} from "../../shared/net/guarded-request.ts";
import { webFetch } from "./fetch.ts";
import { webFetchInput, webSearchInput } from "./schema.ts";
import { type SearchBilling, webSearch } from "./search.ts";

export interface WebToolsOptions {
  /** Reads BRAVE_API_KEY, TAVILY_API_KEY and DUCKDUCKGO_/BRAVE_/TAVILY_BASE_URL at each call. */
  env: NodeJS.ProcessEnv;
  /** Turns every address check off (AGENTOS_ALLOW_PRIVATE_NETWORK=1). The scheme check stays. */
  allowPrivateNetwork?: boolean;
  /** Tests: the name resolver (default: systemResolver, DNS through c-ares). Its answers are still checked. */
  lookup?: Resolver;
  /** Tests: exact IP addresses exempt from the address block. */
  allowedAddresses?: readonly string[];
  /** Overall time for one call, redirects and body included (default 30000 ms). */
  timeoutMs?: number;
}

/** tool::web_fetch and tool::web_search: functions only, no routes (agents call them as tools). */
export function registerWebTools(worker: WorkerClient, options: WebToolsOptions): void {
  const policy: NetworkPolicy = {
    allowPrivateNetwork: options.allowPrivateNetwork ?? false,
    allowedAddresses: new Set((options.allowedAddresses ?? []).map((address) => address.toLowerCase())),
    resolve: options.lookup ?? systemResolver,
  };
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  worker.registerFunction(
    {
      id: "tool::web_fetch",
      description:
        "Fetch a web page or file by http(s) URL and return {url, status, contentType, content, truncated}. " +
        "HTML is converted to plain text (scripts, styles and tags removed). Content is cut at maxSize bytes " +
        "(default 500000) and truncated is then true. Redirects are followed (at most 5); non-2xx statuses " +
        "are returned, not errors. Loopback, private and link-local addresses are refused.",
      input: webFetchInput,
    },
    (input, ctx) => webFetch(input, { policy: policyForCaller(policy, ctx.auth), timeoutMs }, ctx.signal),
  );

  worker.registerFunction(
    {
      id: "tool::web_search",
      description:
        "Search the web and return {results: [{title, url, content}], provider}. provider: duckduckgo " +
        "(default, keyless, returns related topics only), brave or tavily (used when their API key is " +
        "configured, otherwise duckduckgo answers and is named in provider). maxResults 1 to 20, default 5.",
      input: webSearchInput,
    },
    (input, ctx) =>
      webSearch(input, {
        env: options.env,
        request: (url, init) =>
          guardedRequest(url, {
            ...init,
            policy: policyForCaller(policy, ctx.auth),
            timeoutMs,
            signal: ctx.signal,
          }),
        billing: searchBilling((request) => worker.trigger(request), ctx.auth),
      }),
  );
}

/**
 * A paid search is paid like a model call: refused before the request when the caller's realm is closed
 * (409) or its budget spent (402), and charged to the acting agent (else the key) after, so an agent
 * steered into searching cannot spend the operator's search key past its budget.
 */
function searchBilling(trigger: TriggerFn, auth: Principal): SearchBilling {
  const account = accountOf(auth);
  return {
    async before() {
      await assertMaySpend(trigger, account);
    },
    async after(provider, usd) {
      const priced = {
        model: { id: `${provider}-search`, inputPrice: 0, outputPrice: 0 },
        provider: { id: provider },
      };
      await recordCost(
        trigger,
        costEvent(account, null, priced, { inputTokens: 0, outputTokens: 0, totalTokens: 0 }, usd),
      );
    },
  };
}
