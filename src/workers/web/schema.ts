import { z } from "zod";
import { SEARCH_PROVIDERS } from "./search.ts";

export const DEFAULT_MAX_SIZE = 500_000;
/** Upper bound of maxSize: 10 MB of body is far more than any model context can take. */
export const MAX_MAX_SIZE = 10_000_000;
export const DEFAULT_MAX_RESULTS = 5;
export const MAX_RESULTS = 20;

export const webFetchInput = z.strictObject({
  url: z
    .string()
    .min(1, "url must not be empty")
    .max(8192, "url must be at most 8192 characters")
    .describe("The http or https URL to fetch"),
  maxSize: z
    .number()
    .int()
    .positive()
    .max(MAX_MAX_SIZE)
    .default(DEFAULT_MAX_SIZE)
    .describe(`Most bytes of the body to return (default ${DEFAULT_MAX_SIZE}); longer content is cut`),
});
export type WebFetchParams = z.output<typeof webFetchInput>;

export const webSearchInput = z.strictObject({
  query: z
    .string()
    .trim()
    .min(1, "query must not be empty")
    .max(1000, "query must be at most 1000 characters")
    .describe("What to search for"),
  provider: z
    .enum(SEARCH_PROVIDERS)
    .default("duckduckgo")
    .describe(
      "duckduckgo (default, keyless, related topics only), brave or tavily (need an API key; duckduckgo is used when it is missing)",
    ),
  maxResults: z
    .number()
    .int()
    .min(1)
    .max(MAX_RESULTS)
    .default(DEFAULT_MAX_RESULTS)
    .describe(`How many results to return, 1 to ${MAX_RESULTS} (default ${DEFAULT_MAX_RESULTS})`),
});
export type WebSearchParams = z.output<typeof webSearchInput>;
