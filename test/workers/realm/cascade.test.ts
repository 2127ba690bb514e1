import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { call, createAgent, createRealm, realmKey } from "../../helpers/control-plane.ts";
import { recordsMentioning } from "../../helpers/races.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

let server: TestServer;

beforeEach(async () => {
  server = await startTestServer();
});
afterEach(async () => {
  await server.close();
});

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
    expect(await recordsMentioning(server, [realmId])).not.toEqual([]);

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
    expect(await recordsMentioning(server, [realmId])).toEqual([]);

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
    expect(await recordsMentioning(server, [realmId])).toEqual([]);
  });

  it("keeps a realm whose purge failed read-only, with the delete pending, until a retry finishes it", async () => {
    const { realmId, agentId, directiveId } = await populatedRealm();
    const key = await realmKey(server, realmId);
    let failing = true;
    server.service.engine.worker("flaky").registerFunction({ id: "flaky::purge_realm" }, () => {
      if (failing) throw new Error("flaky store is down");
      return { purged: 0 };
    });
    const failed = await call(server, "DELETE", `/api/realms/${realmId}`);
    expect(failed.status).toBe(500);
    // Half deleted (the directive purge ran before the flaky one): the marker stays, so it is read-only.
    const kept = await call(server, "GET", `/api/realms/${realmId}`);
    expect(kept.status).toBe(200);
    expect(kept.body.deleting).toBe(true);
    expect((await call(server, "GET", `/api/directives/${realmId}/${directiveId}`)).status).toBe(404);
    const error = `Realm ${realmId} is being deleted`;
    for (const [method, path, body] of [
      ["PATCH", `/api/realms/${realmId}`, { name: "Back" }],
      ["PATCH", `/api/realms/${realmId}`, { status: "Active" }],
      ["POST", "/api/directives", { realmId, title: "Again", level: "realm" }],
      ["POST", "/api/ledger/budget", { realmId, monthlyCents: 5 }],
      ["POST", "/api/hierarchy", { realmId, agentId }],
      ["POST", "/api/agents", { name: "late", model: "gpt-4o", realmId }],
    ] as const) {
      expect(await call(server, method, path, body), `${method} ${path}`).toEqual({
        status: 409,
        body: { error },
      });
    }
    // The keys still work (they go last), so the tenant sees the pending delete.
    expect((await call(server, "GET", `/api/realms/${realmId}`, undefined, key)).body.deleting).toBe(true);

    failing = false;
    expect((await call(server, "DELETE", `/api/realms/${realmId}`)).body).toEqual({ deleted: true });
    expect((await call(server, "GET", `/api/realms/${realmId}`)).status).toBe(404);
    expect((await call(server, "GET", `/api/agents/${agentId}`)).status).toBe(404);
    expect((await call(server, "GET", "/api/realms", undefined, key)).status).toBe(401);
    expect(await recordsMentioning(server, [realmId])).toEqual([]);
  });

  it("runs the API keys' purge after every other worker's, agents included", async () => {
    const realmId = (await createRealm(server)).id;
    const order: string[] = [];
    const { engine } = server.service;
    for (const id of ["auth::purge_realm", "agent::purge_realm", "pulse::purge_realm", "zeta::purge_realm"]) {
      const original = engine.functions.get(id);
      engine.worker(`spy-${id}`).registerFunction({ id }, (input, context) => {
        order.push(id);
        return original ? original.handler(input, context) : { purged: 0 };
      });
    }
    expect((await call(server, "DELETE", `/api/realms/${realmId}`)).body).toEqual({ deleted: true });
    expect(order[0]).toBe("pulse::purge_realm");
    expect(order.slice(-2)).toEqual(["agent::purge_realm", "auth::purge_realm"]);
    expect(order).toContain("zeta::purge_realm");
  });
});

function isEmpty(body: Record<string, unknown> | undefined): boolean {
  if (!body) return true;
  if (Array.isArray(body.directives)) return body.directives.length === 0;
  if (Array.isArray(body.roots)) return body.roots.length === 0;
  if ("eventCount" in body) return body.eventCount === 0 && body.totalCents === 0;
  return false;
}
