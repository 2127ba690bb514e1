import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { call, createAgent, createRealm } from "../../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

let server: TestServer;

beforeEach(async () => {
  server = await startTestServer();
});
afterEach(async () => {
  await server.close();
});

/** Every stored record (outside the append-only audit log) whose scope, key or value names `text`. */
async function recordsMentioning(text: string): Promise<string[]> {
  const trigger = server.service.engine.trigger.bind(server.service.engine);
  const { groups } = (await trigger({ function_id: "state::list_groups", payload: {} })) as {
    groups: string[];
  };
  const found: string[] = [];
  for (const scope of groups.filter((g) => !g.startsWith("audit"))) {
    let cursor: string | undefined;
    do {
      const page = (await trigger({
        function_id: "state::list",
        payload: { scope, limit: 1000, cursor },
      })) as { items: Array<{ key: string; value: unknown }>; nextCursor: string | null };
      for (const item of page.items) {
        if (`${scope} ${item.key} ${JSON.stringify(item.value)}`.includes(text))
          found.push(`${scope}/${item.key}`);
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }
  return found;
}

/** A realm with one of everything: agent, directive, budget, org chart node, pulse, secret. */
async function populatedRealm(): Promise<{ realmId: string; agentId: string; directiveId: string }> {
  const realmId = (await createRealm(server)).id;
  const agentId = await createAgent(server, realmId, { name: "worker" });
  const steps = [
    ["POST", "/api/directives", { realmId, title: "Grow", level: "team" }],
    ["POST", "/api/ledger/budget", { realmId, monthlyCents: 10_000 }],
    ["POST", "/api/hierarchy", { realmId, agentId, title: "Lead" }],
    ["POST", "/api/pulse/register", { realmId, agentId, cron: "0 0 * * * *" }],
    ["POST", "/api/vault", { key: `realm:${realmId}:api_token`, value: "s3cret" }],
  ] as const;
  const results = [];
  for (const [method, path, body] of steps) {
    const response = await call(server, method, path, body);
    expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBeLessThan(300);
    results.push(response.body);
  }
  return { realmId, agentId, directiveId: results[0].id };
}

describe("realm delete cascade", () => {
  it("removes the realm's agents, directives, budgets, org chart, pulses and secrets", async () => {
    const { realmId, agentId, directiveId } = await populatedRealm();
    const other = await populatedRealm();
    expect(await recordsMentioning(realmId)).not.toEqual([]);

    expect(await call(server, "DELETE", `/api/realms/${realmId}`)).toEqual({
      status: 200,
      body: { deleted: true },
    });

    expect((await call(server, "GET", `/api/agents/${agentId}`)).status).toBe(404);
    for (const path of [
      `/api/directives/${realmId}/${directiveId}`,
      `/api/directives/${realmId}`,
      `/api/hierarchy/${realmId}/tree`,
      `/api/pulse/${realmId}/${agentId}`,
      `/api/ledger/summary/${realmId}`,
    ]) {
      const response = await call(server, "GET", path);
      expect(response.status === 404 || isEmpty(response.body), `${path}: ${JSON.stringify(response)}`).toBe(
        true,
      );
    }
    const secrets = await call(server, "GET", `/api/vault?prefix=realm:${realmId}:`);
    expect(secrets.body.keys).toEqual([]);
    expect(await recordsMentioning(realmId)).toEqual([]);

    // The other realm is untouched.
    expect((await call(server, "GET", `/api/agents/${other.agentId}`)).status).toBe(200);
    expect((await call(server, "GET", `/api/directives/${other.realmId}`)).body.count).toBe(1);
    expect((await call(server, "GET", `/api/pulse/${other.realmId}/${other.agentId}`)).status).toBe(200);
  });

  it("leaves no agent behind when agents are created while the realm is being deleted", async () => {
    const realmId = (await createRealm(server)).id;
    const creates = Array.from({ length: 10 }, (_, i) =>
      call(server, "POST", "/api/agents", { name: `racer${i}`, model: "gpt-4o", realmId }),
    );
    const [deleted, ...created] = await Promise.all([
      call(server, "DELETE", `/api/realms/${realmId}`),
      ...creates,
    ]);
    expect(deleted.body).toEqual({ deleted: true });
    for (const response of created) expect([201, 404, 409]).toContain(response.status);
    expect(await recordsMentioning(realmId)).toEqual([]);
  });

  it("keeps the realm when a purge fails, and a retry finishes the delete", async () => {
    const { realmId, agentId } = await populatedRealm();
    let failing = true;
    server.service.engine.worker("flaky").registerFunction({ id: "flaky::purge_realm" }, () => {
      if (failing) throw new Error("flaky store is down");
      return { purged: 0 };
    });
    const failed = await call(server, "DELETE", `/api/realms/${realmId}`);
    expect(failed.status).toBe(500);
    const kept = await call(server, "GET", `/api/realms/${realmId}`);
    expect(kept.status).toBe(200);
    expect(kept.body).not.toHaveProperty("deleting");
    failing = false;
    expect((await call(server, "DELETE", `/api/realms/${realmId}`)).body).toEqual({ deleted: true });
    expect((await call(server, "GET", `/api/agents/${agentId}`)).status).toBe(404);
    expect(await recordsMentioning(realmId)).toEqual([]);
  });
});

function isEmpty(body: Record<string, unknown> | undefined): boolean {
  if (!body) return true;
  if (Array.isArray(body.directives)) return body.directives.length === 0;
  if (Array.isArray(body.roots)) return body.roots.length === 0;
  if ("eventCount" in body) return body.eventCount === 0 && body.totalCents === 0;
  return false;
}
