import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pageOf } from "../../src/shared/pagination.ts";
import { call, createAgent, newRealm } from "../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let realmId: string;

beforeAll(async () => {
  server = await startTestServer();
  realmId = await newRealm(server, "paged");
  for (let i = 0; i < 7; i++) await createAgent(server, realmId, { name: `agent ${i}` });
  for (let i = 0; i < 5; i++) {
    const response = await call(server, "POST", "/api/workflows", {
      realmId,
      id: `flow-${i}`,
      name: "f",
      steps: [{ name: "s", functionId: "memory::recall" }],
    });
    expect(response.status).toBe(201);
  }
});
afterAll(async () => {
  await server.close();
});

describe("pageOf", () => {
  it("returns every item exactly once, in order, across pages of any size, whatever was deleted between pages", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ maxLength: 6 }), { maxLength: 40 }),
        fc.integer({ min: 1, max: 10 }),
        fc.array(fc.nat(), { maxLength: 5 }),
        (keys, limit, deletions) => {
          let items = [...keys];
          const seen: string[] = [];
          let cursor: string | undefined;
          for (let guard = 0; guard <= keys.length + 1; guard++) {
            const page = pageOf(items, (item) => item, { limit, cursor });
            seen.push(...page.items);
            if (!page.nextCursor) break;
            cursor = page.nextCursor;
            // An item deleted after its page was read must not move the next page.
            const gone = deletions.shift();
            if (gone !== undefined && seen.length > 0) {
              const victim = seen[gone % seen.length];
              items = items.filter((item) => item !== victim);
            }
          }
          expect(seen).toEqual([...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
        },
      ),
    );
  });
});

describe("paginated lists", () => {
  it("pages an object list with limit and nextCursor", async () => {
    const first = await call(server, "GET", `/api/agents?realmId=${realmId}&limit=3`);
    expect(first.body.agents).toHaveLength(3);
    const seen = first.body.agents.map((agent: { id: string }) => agent.id);
    let cursor = first.body.nextCursor;
    while (cursor) {
      const next = await call(server, "GET", `/api/agents?realmId=${realmId}&limit=3&cursor=${cursor}`);
      seen.push(...next.body.agents.map((agent: { id: string }) => agent.id));
      cursor = next.body.nextCursor;
    }
    expect(new Set(seen).size).toBe(7);
    expect(seen).toHaveLength(7);
  });

  it("pages agents oldest first, for an admin across realms too, skipping one deleted between pages", async () => {
    const all: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await call(server, "GET", `/api/agents?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      all.push(...page.body.agents.map((agent: { id: string }) => agent.id));
      cursor = page.body.nextCursor ?? undefined;
    } while (cursor);
    const inRealm = (await call(server, "GET", `/api/agents?realmId=${realmId}&limit=500`)).body.agents.map(
      (agent: { id: string; createdAt: string }) => agent.id,
    );
    expect(all.filter((id) => inRealm.includes(id))).toEqual(inRealm);
    const first = await call(server, "GET", `/api/agents?realmId=${realmId}&limit=2`);
    const [, second] = first.body.agents as Array<{ id: string }>;
    const next = inRealm[2] as string;
    expect((await call(server, "DELETE", `/api/agents/${next}`)).status).toBe(204);
    const rest = await call(
      server,
      "GET",
      `/api/agents?realmId=${realmId}&limit=500&cursor=${first.body.nextCursor}`,
    );
    expect(rest.body.agents.map((agent: { id: string }) => agent.id)).toEqual(inRealm.slice(3));
    expect(second?.id).toBe(inRealm[1]);
  });

  it("answers a bare array with an RFC 8288 Link header to the next page", async () => {
    const response = await server.request(`/api/workflows?realmId=${realmId}&limit=2`);
    expect(await response.json()).toEqual([
      expect.objectContaining({ id: "flow-0" }),
      expect.objectContaining({ id: "flow-1" }),
    ]);
    const link = response.headers.get("link");
    expect(link).toMatch(/^<\/api\/workflows\?realmId=[\w-]+&limit=2&cursor=[\w-]+>; rel="next"$/);
    const next = await server.request(link?.slice(1, link.indexOf(">")) ?? "");
    expect(((await next.json()) as Array<{ id: string }>).map((w) => w.id)).toEqual(["flow-2", "flow-3"]);
    const last = await server.request(`/api/workflows?realmId=${realmId}&limit=5`);
    expect(last.headers.get("link")).toBeNull();
  });

  it.each(["/api/realms", "/api/models"])("%s is a bare array", async (path) => {
    const response = await call(server, "GET", path);
    expect(Array.isArray(response.body)).toBe(true);
  });

  it.each([
    ["/api/agents?limit=0", "limit"],
    ["/api/agents?limit=501", "limit"],
    ["/api/agents?limit=true", "limit"],
    ["/api/agents?cursor=nonsense", "cursor"],
    ["/api/realms?cursor=%7B%7D", "cursor"],
  ])("GET %s is a 400 naming %s", async (path, field) => {
    const response = await call(server, "GET", path);
    expect(response.status).toBe(400);
    expect(response.body.error).toContain(field);
  });

  it("refuses metadata past its limit with a 400 naming the field and the limit", async () => {
    const response = await call(server, "POST", "/api/agents", {
      name: "big",
      model: "gpt-4o",
      metadata: { blob: "x".repeat(17 * 1024) },
    });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatch(/metadata.*16384 bytes/);
  });
});
