import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SEARCH_PRICE_USD } from "../../../src/workers/web/search.ts";
import { call, spentBudget } from "../../helpers/control-plane.ts";
import { toolsServer } from "../tools/setup.ts";

// The service reads the search key and base URL from its environment, filled in once the fake listens.
const searchEnv: Record<string, string> = { BRAVE_API_KEY: "brave-key" };
let brave: Server;
let searches = 0;

beforeAll(async () => {
  brave = createServer((req, res) => {
    if (req.url?.startsWith("/res/v1/web/search")) searches++;
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        web: {
          results: [{ title: "Node.js", url: "https://nodejs.org/", description: "<strong>Node</strong>" }],
        },
      }),
    );
  });
  await new Promise<void>((resolve) => brave.listen(0, "127.0.0.1", resolve));
  searchEnv.BRAVE_BASE_URL = `http://127.0.0.1:${(brave.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => brave.close(() => resolve())));

const env = toolsServer(searchEnv);

describe("a paid web search", () => {
  it("is charged to the agent that searched, at the provider's list price", async () => {
    const { realmId } = await env.agent();
    const answer = await env.tool<{ provider: string }>("tool::web_search", {
      query: "node",
      provider: "brave",
    });
    expect(answer.provider).toBe("brave");
    const summary = await call(env.server, "GET", `/api/ledger/summary/${realmId}?groupBy=model`);
    expect(summary.body).toMatchObject({ breakdown: { "brave-search": SEARCH_PRICE_USD.brave * 100 } });
  });

  it("is refused with 402 before any request once the realm's budget is spent", async () => {
    const { realmId } = await env.agent();
    await spentBudget(env.server, realmId);
    const before = searches;
    const refused = await env.failure("tool::web_search", { query: "node", provider: "brave" });
    expect(refused.status).toBe(402);
    expect(searches).toBe(before);
  });
});
