import { AppError } from "../../shared/errors.ts";
import type { GuardedRequestInit, GuardedResponse } from "../../shared/net/guarded-request.ts";
import { htmlToText } from "./html.ts";

export const SEARCH_PROVIDERS = ["duckduckgo", "brave", "tavily"] as const;
export type SearchProvider = (typeof SEARCH_PROVIDERS)[number];

export const DEFAULT_BASE_URLS: Record<SearchProvider, string> = {
  duckduckgo: "https://api.duckduckgo.com",
  brave: "https://api.search.brave.com",
  tavily: "https://api.tavily.com",
};

/** Largest provider answer read; a bigger one is cut and then fails as invalid JSON. */
const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;

export interface SearchResult {
  title: string;
  url: string;
  content: string;
}

export interface WebSearchInput {
  query: string;
  provider: SearchProvider;
  maxResults: number;
}

export interface WebSearchOutput {
  results: SearchResult[];
  /** The provider that answered: duckduckgo when the chosen one has no key configured. */
  provider: SearchProvider;
}

/** The guarded request, already bound to the worker's network policy and timeout. */
export type SearchRequest = (
  url: string,
  init: Pick<GuardedRequestInit, "method" | "headers" | "body" | "maxBytes">,
) => Promise<GuardedResponse>;

/**
 * US dollars a search costs on the paid providers' pay-as-you-go plans: Brave Search $5 per 1 000
 * requests (api-dashboard.search.brave.com/app/plans), Tavily $0.008 a credit, a basic search being one
 * (docs.tavily.com/documentation/api-credits). Free monthly credits are not counted: a budget sees the
 * list price.
 */
export const SEARCH_PRICE_USD = { brave: 0.005, tavily: 0.008 } as const;
export type PaidSearchProvider = keyof typeof SEARCH_PRICE_USD;

/** A paid search is asked for before it is made (may refuse by throwing) and charged once it answered. */
export interface SearchBilling {
  before(): Promise<void>;
  after(provider: PaidSearchProvider, usd: number): Promise<void>;
}

export interface SearchDeps {
  env: NodeJS.ProcessEnv;
  request: SearchRequest;
  billing?: SearchBilling;
}

/** tool::web_search. Keys and base URLs are read from the environment at each call. */
export async function webSearch(input: WebSearchInput, deps: SearchDeps): Promise<WebSearchOutput> {
  const { env } = deps;
  const key =
    input.provider === "duckduckgo" ? undefined : env[`${input.provider.toUpperCase()}_API_KEY`]?.trim();
  if (input.provider === "duckduckgo" || !key) {
    return { results: await searchDuckDuckGo(input, deps), provider: "duckduckgo" };
  }
  const paid = input.provider;
  await deps.billing?.before();
  const results =
    paid === "brave" ? await searchBrave(input, key, deps) : await searchTavily(input, key, deps);
  await deps.billing?.after(paid, SEARCH_PRICE_USD[paid]);
  return { results, provider: paid };
}

function baseUrl(provider: SearchProvider, env: NodeJS.ProcessEnv): string {
  const configured = env[`${provider.toUpperCase()}_BASE_URL`]?.trim();
  return (configured || DEFAULT_BASE_URLS[provider]).replace(/\/+$/, "");
}

async function getJson(
  provider: SearchProvider,
  url: string,
  init: Omit<Parameters<SearchRequest>[1], "maxBytes">,
  deps: SearchDeps,
): Promise<unknown> {
  const response = await deps.request(url, { ...init, maxBytes: MAX_RESPONSE_BYTES });
  if (response.status < 200 || response.status > 299) {
    throw new AppError("unavailable", `Search provider ${provider} answered HTTP ${response.status}`);
  }
  try {
    return JSON.parse(response.body.toString("utf8"));
  } catch {
    throw new AppError("unavailable", `Search provider ${provider} returned invalid JSON`);
  }
}

const text = (value: unknown): string => (typeof value === "string" ? value : "");
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const field = (value: unknown, key: string): unknown =>
  value !== null && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;

/** DuckDuckGo Instant Answer API (keyless): only RelatedTopics, nested topic groups flattened. */
async function searchDuckDuckGo(input: WebSearchInput, deps: SearchDeps): Promise<SearchResult[]> {
  const params = new URLSearchParams({ q: input.query, format: "json", no_html: "1", skip_disambig: "1" });
  const body = await getJson("duckduckgo", `${baseUrl("duckduckgo", deps.env)}/?${params}`, {}, deps);
  const results: SearchResult[] = [];
  const visit = (topics: unknown[]) => {
    for (const topic of topics) {
      if (results.length >= input.maxResults) return;
      const nested = field(topic, "Topics");
      if (Array.isArray(nested)) {
        visit(nested);
        continue;
      }
      const url = text(field(topic, "FirstURL"));
      const content = text(field(topic, "Text"));
      if (!url || !content) continue;
      const dash = content.indexOf(" - ");
      results.push({ title: dash >= 0 ? content.slice(0, dash) : content, url, content });
    }
  };
  visit(list(field(body, "RelatedTopics")));
  return results;
}

/** Brave Search API: GET with X-Subscription-Token; snippets carry <strong> markup, stripped here. */
async function searchBrave(input: WebSearchInput, key: string, deps: SearchDeps): Promise<SearchResult[]> {
  const params = new URLSearchParams({ q: input.query, count: String(input.maxResults) });
  const body = await getJson(
    "brave",
    `${baseUrl("brave", deps.env)}/res/v1/web/search?${params}`,
    { headers: { accept: "application/json", "x-subscription-token": key } },
    deps,
  );
  return list(field(field(body, "web"), "results"))
    .map((item) => ({
      title: htmlToText(text(field(item, "title"))),
      url: text(field(item, "url")),
      content: htmlToText(text(field(item, "description"))),
    }))
    .filter((result) => result.url !== "")
    .slice(0, input.maxResults);
}

/** Tavily: POST JSON with the key in the body. */
async function searchTavily(input: WebSearchInput, key: string, deps: SearchDeps): Promise<SearchResult[]> {
  const body = await getJson(
    "tavily",
    `${baseUrl("tavily", deps.env)}/search`,
    {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ api_key: key, query: input.query, max_results: input.maxResults }),
    },
    deps,
  );
  return list(field(body, "results"))
    .map((item) => ({
      title: text(field(item, "title")),
      url: text(field(item, "url")),
      content: text(field(item, "content")),
    }))
    .filter((result) => result.url !== "")
    .slice(0, input.maxResults);
}
