import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createAgent, newRealm, realmKey } from "../../helpers/control-plane.ts";
import { sleep } from "../../helpers/iii.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

/** A realm whose council is three members (opaque agent ids on the org chart), and its key. */
async function councilRealm(members = ["cfo", "cto", "ceo"]) {
  const realmId = await newRealm(server, "council");
  const key = await realmKey(server, realmId);
  for (const agentId of members) {
    const set = await call(
      server,
      "POST",
      "/api/hierarchy",
      { realmId, agentId, capabilities: ["Council"] },
      key,
    );
    expect(set.status, JSON.stringify(set.body)).toBe(200);
  }
  return { realmId, key };
}

async function submit(realmId: string, key: string | undefined, fields: Record<string, unknown>) {
  return call(
    server,
    "POST",
    "/api/council/proposals",
    { realmId, title: "t", requestedBy: "cfo", ...fields },
    key,
  );
}

const vote = (realmId: string, id: string, voterId: string, choice: string, key?: string) =>
  call(server, "POST", `/api/council/proposals/${realmId}/${id}/vote`, { voterId, vote: choice }, key);

describe("council proposals", () => {
  it("approves a budget change at quorum, and the budget changes", async () => {
    const { realmId, key } = await councilRealm();
    const proposal = await submit(realmId, key, {
      kind: "budget_change",
      payload: { agentId: "cto", monthlyCents: 5000, hardLimit: true },
    });
    expect(proposal.status, JSON.stringify(proposal.body)).toBe(201);
    expect(proposal.body).toMatchObject({ status: "pending", voters: ["ceo", "cfo", "cto"], quorum: 2 });
    const id = proposal.body.id;
    expect((await vote(realmId, id, "cfo", "for", key)).body.status).toBe("pending");
    const decided = await vote(realmId, id, "ceo", "for", key);
    expect(decided.body).toMatchObject({
      status: "approved",
      tally: { for: 2, against: 0, abstain: 0 },
      effect: { status: "applied", functionId: "ledger::set_budget" },
    });
    const check = await call(server, "GET", `/api/ledger/check/${realmId}/cto`, undefined, key);
    expect(check.body).toMatchObject({ allowed: true, limitCents: 5000 });
    const late = await vote(realmId, id, "cto", "against", key);
    expect(late.status).toBe(409);
    const log = await call(server, "GET", `/api/council/log/${realmId}?order=asc`, undefined, key);
    expect(log.body.entries.map((e: { action: string }) => e.action)).toEqual([
      "proposal_submitted",
      "vote_cast",
      "vote_cast",
      "proposal_approved",
      "effect_applied",
    ]);
    expect((await call(server, "GET", `/api/council/verify/${realmId}`, undefined, key)).body).toEqual({
      valid: true,
      length: 5,
      brokenAt: null,
    });
    // Member ids are labels any key of the realm may use: the log names the key that acted.
    const [submitted, firstVote] = log.body.entries;
    expect(submitted.details.by).toMatch(/^realm:/);
    expect(firstVote).toMatchObject({ actorId: "cfo", details: { vote: "for", by: submitted.details.by } });
  });

  it("rejects once the quorum can no longer be reached; the latest vote of a voter counts", async () => {
    const { realmId, key } = await councilRealm();
    const { body } = await submit(realmId, key, { kind: "custom", payload: { note: "x" } });
    await vote(realmId, body.id, "cfo", "against", key);
    const changed = await vote(realmId, body.id, "cfo", "for", key);
    expect(changed.body.tally).toEqual({ for: 1, against: 0, abstain: 0 });
    await vote(realmId, body.id, "cto", "against", key);
    const rejected = await vote(realmId, body.id, "ceo", "against", key);
    expect(rejected.body.status).toBe("rejected");
    expect(rejected.body.effect).toBeUndefined();
  });

  it("refuses votes from non-members, unknown kinds and payloads the effect would refuse", async () => {
    const { realmId, key } = await councilRealm();
    const { body } = await submit(realmId, key, { kind: "custom" });
    const outsider = await vote(realmId, body.id, "intern", "for", key);
    expect(outsider.status).toBe(403);
    expect(outsider.body.error).toContain("intern is not a council member");
    expect((await vote(realmId, body.id, "cfo", "maybe", key)).status).toBe(400);
    expect((await submit(realmId, key, { kind: "coup" })).status).toBe(400);
    const bad = await submit(realmId, key, { kind: "budget_change", payload: { agentId: "cto" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain("ledger::set_budget requires monthlyCents");
    const typo = await submit(realmId, key, {
      kind: "strategy_change",
      payload: { titel: "x", level: "realm" },
    });
    expect(typo.body.error).toContain("titel is not a field of directive::create");
    expect((await submit(realmId, key, { kind: "custom", quorum: 4 })).status).toBe(400);
  });

  it("refuses a realm key's realm-wide budget change at submit, which its effect could only fail", async () => {
    const { realmId, key } = await councilRealm();
    const realmWide = { kind: "budget_change", payload: { monthlyCents: 100 } };
    const refused = await submit(realmId, key, realmWide);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toContain("payload.agentId");
    expect((await submit(realmId, undefined, realmWide)).status).toBe(201);
  });

  it("applies the effect exactly once when votes reaching quorum arrive together", async () => {
    const { realmId, key } = await councilRealm(["m1", "m2", "m3", "m4", "m5"]);
    const { body } = await submit(realmId, key, {
      kind: "hire_agent",
      payload: { name: "new-hire", model: "gpt-4o" },
      quorum: 2,
    });
    const results = await Promise.all(
      ["m1", "m2", "m3", "m4", "m5"].map((m) => vote(realmId, body.id, m, "for", key)),
    );
    expect(results.filter((result) => result.body.effect?.status === "applied")).toHaveLength(1);
    const agents = await call(server, "GET", `/api/agents?realmId=${realmId}`, undefined, key);
    expect(agents.body.agents.filter((agent: { name: string }) => agent.name === "new-hire")).toHaveLength(1);
  });

  it("lets an admin decide alone when the realm has no council, and suspends or terminates on approval", async () => {
    const realmId = await newRealm(server, "no-council");
    const key = await realmKey(server, realmId);
    const doomed = await createAgent(server, realmId, { name: "doomed" });
    const fire = await submit(realmId, key, { kind: "terminate_agent", payload: { agentId: doomed } });
    expect(fire.body.voters).toEqual([]);
    expect((await vote(realmId, fire.body.id, "me", "for", key)).status).toBe(403);
    const fired = await vote(realmId, fire.body.id, "operator", "for");
    expect(fired.body.effect).toMatchObject({ status: "applied", functionId: "agent::delete" });
    expect((await call(server, "GET", `/api/agents/${doomed}`)).status).toBe(404);
    const pause = await submit(realmId, key, { kind: "realm_suspend" });
    await vote(realmId, pause.body.id, "operator", "for");
    expect((await call(server, "GET", `/api/realms/${realmId}`)).body.status).toBe("Paused");
  });

  it("creates a directive for an approved strategy change", async () => {
    const { realmId, key } = await councilRealm(["solo"]);
    const { body } = await submit(realmId, key, {
      kind: "strategy_change",
      payload: { title: "Go upmarket", level: "realm" },
    });
    const approved = await vote(realmId, body.id, "solo", "for", key);
    expect(approved.body.effect.status).toBe("applied");
    const directives = await call(server, "GET", `/api/directives/${realmId}`, undefined, key);
    expect(directives.body.directives.map((d: { title: string }) => d.title)).toContain("Go upmarket");
  });

  it("expires a proposal nobody decided in time", async () => {
    const { realmId, key } = await councilRealm();
    const { body } = await submit(realmId, key, { kind: "custom", expiresInMs: 1000 });
    await sleep(1100);
    const list = await call(
      server,
      "GET",
      `/api/council/proposals/${realmId}?status=expired`,
      undefined,
      key,
    );
    expect(list.body.proposals.map((p: { id: string }) => p.id)).toEqual([body.id]);
    expect((await vote(realmId, body.id, "cfo", "for", key)).status).toBe(409);
  });

  it("keeps realms apart", async () => {
    const { realmId, key } = await councilRealm();
    const other = await realmKey(server, await newRealm(server, "other"));
    expect((await submit(realmId, other, { kind: "custom" })).status).toBe(404);
    expect((await call(server, "GET", `/api/council/log/${realmId}`, undefined, other)).status).toBe(404);
    const { body } = await submit(realmId, key, { kind: "custom" });
    const one = `/api/council/proposals/${realmId}/${body.id}`;
    expect((await call(server, "GET", one, undefined, other)).status).toBe(404);
    expect((await call(server, "POST", `${one}/cancel`, {}, other)).status).toBe(404);
    expect((await call(server, "GET", one, undefined, key)).body).toMatchObject({ status: "pending" });
  });

  it("shows one proposal by id, expired once its time ran out, and 404 for an unknown id", async () => {
    const { realmId, key } = await councilRealm();
    const { body } = await submit(realmId, key, { kind: "custom", expiresInMs: 1000 });
    const one = `/api/council/proposals/${realmId}/${body.id}`;
    expect((await call(server, "GET", one, undefined, key)).body).toEqual(body);
    await sleep(1100);
    expect((await call(server, "GET", one, undefined, key)).body).toMatchObject({ status: "expired" });
    const missing = await call(server, "GET", `/api/council/proposals/${realmId}/prp-nope`, undefined, key);
    expect(missing.status).toBe(404);
    expect(missing.body.error).toContain("prp-nope");
  });

  it("cancels a pending proposal for the key that submitted it or an admin: votes close, the log says why", async () => {
    const { realmId, key } = await councilRealm();
    const { body } = await submit(realmId, key, {
      kind: "budget_change",
      payload: { agentId: "cto", monthlyCents: 1 },
    });
    const cancel = (id: string, by?: string) =>
      call(
        server,
        "POST",
        `/api/council/proposals/${realmId}/${id}/cancel`,
        { reason: "changed our mind" },
        by,
      );
    const otherKey = await realmKey(server, realmId);
    const refused = await cancel(body.id, otherKey);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toContain("submitted");
    const cancelled = await cancel(body.id, key);
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body).toMatchObject({ status: "cancelled", reason: "changed our mind", version: 2 });
    expect(cancelled.body.decidedAt).toEqual(expect.any(String));
    expect((await vote(realmId, body.id, "cfo", "for", key)).status).toBe(409);
    const again = await cancel(body.id);
    expect(again.status).toBe(409);
    expect(again.body.error).toContain("already cancelled");
    const check = await call(server, "GET", `/api/ledger/check/${realmId}/cto`, undefined, key);
    expect(check.body.limitCents).not.toBe(1);
    const log = await call(server, "GET", `/api/council/log/${realmId}?order=asc`, undefined, key);
    expect(log.body.entries.map((e: { action: string }) => e.action)).toEqual([
      "proposal_submitted",
      "proposal_cancelled",
    ]);
    expect(log.body.entries[1]).toMatchObject({
      actorKind: "human",
      details: { reason: "changed our mind" },
    });
    expect(log.body.entries[1].actorId).toMatch(/^realm:/);
    const byAdmin = await submit(realmId, key, { kind: "custom" });
    expect((await cancel(byAdmin.body.id)).body).toMatchObject({ status: "cancelled" });
    const listed = await call(
      server,
      "GET",
      `/api/council/proposals/${realmId}?status=cancelled`,
      undefined,
      key,
    );
    expect(listed.body.count).toBe(2);
  });
});

describe("council listings", () => {
  it("pages by the proposal, not its place: one submitted between two pages repeats none", async () => {
    const { realmId, key } = await councilRealm();
    for (const title of ["p0", "p1", "p2", "p3"]) await submit(realmId, key, { kind: "custom", title });
    const list = (query: string) =>
      call(server, "GET", `/api/council/proposals/${realmId}?limit=2${query}`, undefined, key);
    const first = await list("");
    await submit(realmId, key, { kind: "custom", title: "late" });
    const second = await list(`&cursor=${first.body.nextCursor}`);
    const titles = [...first.body.proposals, ...second.body.proposals].map((p: { title: string }) => p.title);
    // Each of the four once (the late one sorts before the cursor); not a shifted page of repeats.
    expect([...titles].sort()).toEqual(["p0", "p1", "p2", "p3"]);
  });
});

describe("the activity chain", () => {
  const trigger = (function_id: string, payload: unknown) =>
    server.service.engine.trigger({ function_id, payload }) as Promise<unknown>;

  async function chainOf(entries: number) {
    const { realmId, key } = await councilRealm();
    for (let index = 0; index < entries; index++) {
      const appended = await call(
        server,
        "POST",
        "/api/council/activity",
        {
          realmId,
          actorKind: "human",
          actorId: "op",
          action: `step_${index}`,
          entityType: "x",
          entityId: "y",
        },
        key,
      );
      expect(appended.status).toBe(201);
    }
    const verify = async () => (await call(server, "GET", `/api/council/verify/${realmId}`)).body;
    const scope = "council_activity";
    const keyOf = (seq: number) => `${encodeURIComponent(realmId)}:${String(seq).padStart(20, "0")}`;
    return { realmId, key, verify, scope, keyOf };
  }

  it("detects an edited entry", async () => {
    const chain = await chainOf(4);
    const stored = (await trigger("state::get", { scope: chain.scope, key: chain.keyOf(2) })) as Record<
      string,
      unknown
    >;
    await trigger("state::set", {
      scope: chain.scope,
      key: chain.keyOf(2),
      value: { ...stored, actorId: "forged" },
    });
    expect(await chain.verify()).toMatchObject({ valid: false, length: 4, brokenAt: 2 });
  });

  it("detects a tail cut off", async () => {
    const chain = await chainOf(4);
    await trigger("state::delete", { scope: chain.scope, key: chain.keyOf(4) });
    expect(await chain.verify()).toMatchObject({ valid: false, brokenAt: 4 });
  });

  it("detects reordered entries", async () => {
    const chain = await chainOf(4);
    const second = await trigger("state::get", { scope: chain.scope, key: chain.keyOf(2) });
    const third = await trigger("state::get", { scope: chain.scope, key: chain.keyOf(3) });
    await trigger("state::set", { scope: chain.scope, key: chain.keyOf(2), value: third });
    await trigger("state::set", { scope: chain.scope, key: chain.keyOf(3), value: second });
    expect(await chain.verify()).toMatchObject({ valid: false, brokenAt: 2 });
  });

  it("refuses system entries and the council's own records from a realm key, and records the ledger's refusals", async () => {
    const chain = await chainOf(0);
    const forged = await call(
      server,
      "POST",
      "/api/council/activity",
      {
        realmId: chain.realmId,
        actorKind: "system",
        actorId: "ledger",
        action: "x",
        entityType: "x",
        entityId: "x",
      },
      chain.key,
    );
    expect(forged.status).toBe(403);
    // Nor the council's own records: a vote "by the operator" that was never cast.
    const forgedVote = await call(
      server,
      "POST",
      "/api/council/activity",
      {
        realmId: chain.realmId,
        actorKind: "human",
        actorId: "operator",
        action: "Vote_Cast",
        entityType: "proposal",
        entityId: "prp-x",
        details: { vote: "for" },
      },
      chain.key,
    );
    expect(forgedVote.status).toBe(403);
    expect(forgedVote.body.error).toContain("the council's own record");
    await call(server, "POST", "/api/ledger/budget", {
      realmId: chain.realmId,
      agentId: "spender",
      monthlyCents: 1,
      hardLimit: true,
    });
    const spend = await call(server, "POST", "/api/ledger/spend", {
      realmId: chain.realmId,
      agentId: "spender",
      costCents: 5,
      provider: "openai",
      model: "gpt-4o",
      inputTokens: 1,
      outputTokens: 1,
    });
    expect(spend.status).toBe(402);
    const log = await call(server, "GET", `/api/council/log/${chain.realmId}`, undefined, chain.key);
    expect(log.body.entries[0]).toMatchObject({
      action: "budget_exceeded",
      actorKind: "system",
      actorId: "ledger",
      entityId: "spender",
      details: { spentCents: 5, limitCents: 1 },
    });
    expect((await chain.verify()).valid).toBe(true);
  });

  it("goes with its realm", async () => {
    const chain = await chainOf(2);
    expect((await call(server, "DELETE", `/api/realms/${chain.realmId}`)).status).toBe(200);
    expect(await trigger("state::get", { scope: chain.scope, key: chain.keyOf(1) })).toBeNull();
  });
});
