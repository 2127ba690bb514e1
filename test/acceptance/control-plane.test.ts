import { describe, expect, it } from "vitest";
import { serverWithFakeModel } from "../helpers/fake-openai.ts";
import { eventually } from "../helpers/iii.ts";
import type { JsonBody } from "../helpers/server.ts";

const ctx = serverWithFakeModel();

/** One request; fails the test with the route and the reply when the status is not the expected one. */
async function api(method: string, path: string, body?: unknown, key?: string, expected = [200, 201, 204]) {
  const response = await ctx.server.request(path, {
    method,
    ...(body === undefined ? {} : { json: body }),
    ...(key === undefined ? {} : { key }),
  });
  const text = await response.text();
  expect(expected, `${method} ${path} → ${response.status} ${text}`).toContain(response.status);
  return (text ? JSON.parse(text) : null) as JsonBody;
}

describe("a realm set up, budgeted, given goals and an org chart, its agents waking on schedule, all over HTTP", () => {
  it("works end to end for a tenant with a realm-bound key, and nothing is lost under concurrent use", async () => {
    // The operator creates the tenant and its key.
    const realm = await api("POST", "/api/realms", { name: "Acme", owner: "ops@acme.test", maxAgents: 3 });
    expect(realm).toMatchObject({ id: expect.stringMatching(/^realm-/), status: "Active" });
    const { key } = await api("POST", "/api/keys", { name: "acme", realmId: realm.id });

    // The tenant creates its agents (in its own realm by default), up to the limit.
    const lead = (await api("POST", "/api/agents", { name: "lead", model: "gpt-4o" }, key)).id;
    const analyst = (await api("POST", "/api/agents", { name: "analyst", model: "gpt-4o" }, key)).id;
    const extra = await Promise.all(
      ["a", "b", "c"].map((name) =>
        ctx.server.request("/api/agents", { method: "POST", json: { name }, key }).then((r) => r.status),
      ),
    );
    expect(extra.sort()).toEqual([201, 409, 409]);

    // Budgets: the operator caps the realm (the tenant may not lift that cap: 403), and the tenant
    // budgets its analyst within it.
    await api("POST", "/api/ledger/budget", { realmId: realm.id, monthlyCents: 100_000 });
    await api("POST", "/api/ledger/budget", { realmId: realm.id, monthlyCents: 10_000_000 }, key, [403]);
    await api(
      "POST",
      "/api/ledger/budget",
      { realmId: realm.id, agentId: analyst, monthlyCents: 50_000 },
      key,
    );

    // A goal tree.
    const goal = await api(
      "POST",
      "/api/directives",
      { realmId: realm.id, title: "Grow", level: "realm" },
      key,
    );
    const team = await api(
      "POST",
      "/api/directives",
      { realmId: realm.id, title: "Research", level: "team", parentId: goal.id, ownerAgentId: lead },
      key,
    );
    const task = await api(
      "POST",
      "/api/directives",
      { realmId: realm.id, title: "Market scan", level: "agent", parentId: team.id, ownerAgentId: analyst },
      key,
    );
    const ancestry = await api("GET", `/api/directives/${realm.id}/${task.id}/ancestry`, undefined, key);
    expect(ancestry.ancestry.map((item: { id: string }) => item.id)).toEqual([task.id, team.id, goal.id]);

    // An org chart.
    await api("POST", "/api/hierarchy", { realmId: realm.id, agentId: lead, title: "Lead", rank: 1 }, key);
    await api(
      "POST",
      "/api/hierarchy",
      { realmId: realm.id, agentId: analyst, title: "Analyst", reportsTo: lead, capabilities: ["Research"] },
      key,
    );
    const tree = await api("GET", `/api/hierarchy/${realm.id}/tree`, undefined, key);
    expect(tree.roots[0]).toMatchObject({ agentId: lead, reports: [{ agentId: analyst }] });
    expect(
      (await api("GET", `/api/hierarchy/${realm.id}/find?capability=research`, undefined, key)).count,
    ).toBe(1);

    // The analyst wakes every second with the full context.
    await api(
      "POST",
      "/api/pulse/register",
      { realmId: realm.id, agentId: analyst, cron: "* * * * * *", contextMode: "Full" },
      key,
    );
    const run = await eventually(async () => {
      const status = await api("GET", `/api/pulse/${realm.id}/${analyst}`, undefined, key);
      return status.recentRuns.find((r: JsonBody) => r.source === "cron" && r.status === "Completed");
    }, 15_000);
    await api("PATCH", `/api/pulse/${realm.id}/${analyst}`, { enabled: false }, key);
    expect(run.contextSnapshot).toMatchObject({
      mode: "full",
      budget: { allowed: true },
      chain: [{ agentId: analyst }, { agentId: lead }],
      missions: [],
    });
    expect(run.contextSnapshot.directives.map((d: { id: string }) => d.id).sort()).toEqual(
      [goal.id, team.id, task.id].sort(),
    );
    expect(JSON.stringify(ctx.fake.requests.at(-1))).toContain("Market scan");

    // The model calls were charged to the analyst (cost.incurred → ledger::spend).
    const byModel = await eventually(async () => {
      const summary = await api("GET", `/api/ledger/summary/${realm.id}?groupBy=model`, undefined, key);
      return summary.eventCount > 0 ? summary : undefined;
    });
    expect(byModel.breakdown["gpt-4o"]).toBeGreaterThan(0);

    // Concurrent spends are all counted, against both budgets.
    const before = await api("GET", `/api/ledger/check/${realm.id}/${analyst}`, undefined, key);
    const spend = {
      realmId: realm.id,
      agentId: analyst,
      provider: "openai",
      model: "gpt-4o",
      inputTokens: 1,
      outputTokens: 1,
    };
    await Promise.all(
      Array.from({ length: 50 }, () => api("POST", "/api/ledger/spend", { ...spend, costCents: 3 }, key)),
    );
    const after = await api("GET", `/api/ledger/check/${realm.id}/${analyst}`, undefined, key);
    expect(after.spentCents).toBeCloseTo(before.spentCents + 150, 6);

    // Concurrent directive updates with the same version: exactly one wins.
    const outcomes = await Promise.all(
      ["Scan A", "Scan B"].map((title) =>
        ctx.server
          .request(`/api/directives/${realm.id}/${task.id}`, {
            method: "PATCH",
            json: { title, expectedVersion: task.version },
            key,
          })
          .then((r) => r.status),
      ),
    );
    expect(outcomes.sort()).toEqual([200, 409]);

    // Another realm stays out of reach of this key: as if it did not exist.
    const other = await api("POST", "/api/realms", { name: "Other", owner: "ops" });
    await api("GET", `/api/directives/${other.id}`, undefined, key, [404]);
    await api("GET", `/api/ledger/summary/${other.id}`, undefined, key, [404]);
  }, 60_000);
});
