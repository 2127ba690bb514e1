import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Engine } from "../../../src/engine/engine.ts";
import { USER_AGENT } from "../../../src/shared/net/guarded-request.ts";
import { registerWebTools } from "../../../src/workers/web/index.ts";
import { createTestEngine } from "../../helpers/engine.ts";
import { type LocalServer, sendJson, startLocalServer } from "./local-server.ts";

/** DuckDuckGo's shape: plain topics and topic groups with nested Topics, some entries without a URL. */
function ddgAnswer(count: number) {
  const topic = (i: number) => ({
    FirstURL: `https://duckduckgo.com/Topic_${i}`,
    Text: `Topic ${i} - about topic ${i}`,
    Result: `<a href="https://duckduckgo.com/Topic_${i}">Topic ${i}</a>`,
  });
  const half = Math.floor(count / 2);
  return {
    Heading: "Example",
    RelatedTopics: [
      ...Array.from({ length: half }, (_, i) => topic(i)),
      { Text: "no url here" },
      { Name: "Group", Topics: Array.from({ length: count - half }, (_, i) => topic(half + i)) },
    ],
  };
}

let provider: LocalServer;
let answers: { ddgCount: number; status: number; raw?: string };
let env: NodeJS.ProcessEnv;
let engine: Engine;

beforeEach(async () => {
  answers = { ddgCount: 30, status: 200 };
  provider = await startLocalServer((req, res) => {
    if (answers.raw !== undefined) {
      res.writeHead(answers.status, { "content-type": "application/json" });
      res.end(answers.raw);
      return;
    }
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === "/") return sendJson(res, ddgAnswer(answers.ddgCount), answers.status);
    if (url.pathname === "/res/v1/web/search") {
      const count = Number(url.searchParams.get("count"));
      return sendJson(
        res,
        {
          web: {
            results: Array.from({ length: count + 3 }, (_, i) => ({
              title: `Brave <strong>${i}</strong>`,
              url: `https://example.com/brave/${i}`,
              description: `The <strong>best</strong> result &amp; more ${i}`,
            })),
          },
        },
        answers.status,
      );
    }
    if (url.pathname === "/search" && req.method === "POST") {
      const body = JSON.parse(req.body) as { max_results: number };
      return sendJson(
        res,
        {
          results: Array.from({ length: body.max_results }, (_, i) => ({
            title: `Tavily ${i}`,
            url: `https://example.com/tavily/${i}`,
            content: `content ${i}`,
            score: 0.9,
          })),
        },
        answers.status,
      );
    }
    sendJson(res, { error: "unknown" }, 404);
  });
  env = {
    DUCKDUCKGO_BASE_URL: provider.origin,
    BRAVE_BASE_URL: `${provider.origin}/`,
    TAVILY_BASE_URL: provider.origin,
  };
  engine = createTestEngine();
  registerWebTools(engine.worker("web"), { env, allowPrivateNetwork: true });
});

afterEach(async () => {
  engine.shutdown();
  await provider.close();
});

const search = (payload: Record<string, unknown>, on = engine) =>
  on.trigger({ function_id: "tool::web_search", payload }) as Promise<{
    results: Array<{ title: string; url: string; content: string }>;
    provider: string;
  }>;

describe("tool::web_search", () => {
  it("uses keyless DuckDuckGo by default: related topics flattened, 5 results", async () => {
    const answer = await search({ query: "rust lang" });
    expect(answer.provider).toBe("duckduckgo");
    expect(answer.results).toHaveLength(5);
    expect(answer.results[0]).toEqual({
      title: "Topic 0",
      url: "https://duckduckgo.com/Topic_0",
      content: "Topic 0 - about topic 0",
    });
    const seen = new URL(provider.requests[0].url, "http://x");
    expect(seen.pathname).toBe("/");
    expect(Object.fromEntries(seen.searchParams)).toEqual({
      q: "rust lang",
      format: "json",
      no_html: "1",
      skip_disambig: "1",
    });
    expect(provider.requests[0].headers["user-agent"]).toBe(USER_AGENT);
  });

  it("flattens nested topic groups and respects maxResults up to 20", async () => {
    const answer = await search({ query: "q", maxResults: 20 });
    expect(answer.results).toHaveLength(20);
    // 15 plain topics, the URL-less entry skipped, then the group's topics.
    expect(answer.results.map((result) => result.url)).toEqual(
      Array.from({ length: 20 }, (_, i) => `https://duckduckgo.com/Topic_${i}`),
    );
    answers.ddgCount = 3;
    expect((await search({ query: "q", maxResults: 20 })).results).toHaveLength(3);
  });

  it("uses Brave with its key header, stripping markup from snippets", async () => {
    env.BRAVE_API_KEY = "brave-key";
    const answer = await search({ query: "node", provider: "brave", maxResults: 3 });
    expect(answer.provider).toBe("brave");
    expect(answer.results).toEqual(
      [0, 1, 2].map((i) => ({
        title: `Brave ${i}`,
        url: `https://example.com/brave/${i}`,
        content: `The best result & more ${i}`,
      })),
    );
    const seen = provider.requests[0];
    expect(seen.headers["x-subscription-token"]).toBe("brave-key");
    const url = new URL(seen.url, "http://x");
    expect(url.pathname).toBe("/res/v1/web/search");
    expect(Object.fromEntries(url.searchParams)).toEqual({ q: "node", count: "3" });
  });

  it("uses Tavily with the key in the JSON body", async () => {
    env.TAVILY_API_KEY = "tavily-key";
    const answer = await search({ query: "deno", provider: "tavily", maxResults: 4 });
    expect(answer.provider).toBe("tavily");
    expect(answer.results).toHaveLength(4);
    expect(answer.results[3]).toEqual({
      title: "Tavily 3",
      url: "https://example.com/tavily/3",
      content: "content 3",
    });
    const seen = provider.requests[0];
    expect(seen).toMatchObject({ method: "POST", url: "/search" });
    expect(JSON.parse(seen.body)).toEqual({ api_key: "tavily-key", query: "deno", max_results: 4 });
  });

  it("falls back to DuckDuckGo when the chosen provider has no key (empty counts as none)", async () => {
    env.TAVILY_API_KEY = "  ";
    for (const chosen of ["brave", "tavily"]) {
      const answer = await search({ query: "q", provider: chosen, maxResults: 2 });
      expect(answer).toMatchObject({
        provider: "duckduckgo",
        results: [{ title: "Topic 0" }, { title: "Topic 1" }],
      });
    }
    expect(provider.requests.map((seen) => new URL(seen.url, "http://x").pathname)).toEqual(["/", "/"]);
  });

  it("reports provider failures and invalid JSON clearly", async () => {
    env.BRAVE_API_KEY = "wrong-key";
    answers.status = 401;
    await expect(search({ query: "q", provider: "brave" })).rejects.toMatchObject({
      status: 503,
      message: "Search provider brave answered HTTP 401",
    });
    answers.status = 200;
    answers.raw = "<html>not json</html>";
    await expect(search({ query: "q" })).rejects.toMatchObject({
      message: "Search provider duckduckgo returned invalid JSON",
    });
  });

  it("validates its input strictly", async () => {
    for (const payload of [
      { query: "" },
      { query: "   " },
      { query: "q", maxResults: 0 },
      { query: "q", maxResults: 21 },
      { query: "q", maxResults: 2.5 },
      { query: "q", provider: "google" },
      { query: "q", extra: true },
    ]) {
      await expect(search(payload)).rejects.toMatchObject({ status: 400 });
    }
    expect(provider.requests).toHaveLength(0);
  });

  it("goes through the SSRF guard: a provider URL on loopback is refused without the private network", async () => {
    const strict = createTestEngine();
    registerWebTools(strict.worker("web"), { env });
    try {
      await expect(search({ query: "q" }, strict)).rejects.toMatchObject({
        status: 400,
        message: expect.stringMatching(
          /^SSRF protection: http:\/\/127\.0\.0\.1\S* resolves to blocked IP 127\.0\.0\.1$/,
        ),
      });
      expect(provider.requests).toHaveLength(0);
    } finally {
      strict.shutdown();
    }
  });
});
