import { describe, expect, it } from "vitest";
import { stateClient } from "../../../src/engine/state/client.ts";
import { CONTEXT_READ_TIMEOUT_MS } from "../../../src/workers/pulse/context.ts";
import { PULSE_MESSAGE } from "../../../src/workers/pulse/run.ts";
import { LEASES_SCOPE, runKey, runsScope, SEQUENCES_SCOPE } from "../../../src/workers/pulse/store.ts";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";
import { eventually } from "../../helpers/iii.ts";
import { json } from "../../helpers/server.ts";
import { invoke, registered, setup, statusOf, systemPromptOf } from "./helpers.ts";

const ctx = serverWithFakeModel();
const NEVER = "0 0 0 1 1 *";

async function invoked(body: Record<string, unknown>) {
  const response = await invoke(ctx.server, body);
  expect(response.status).toBe(200);
  return json(response);
}

describe("pulse::invoke", () => {
  it("runs the agent with a thin context: a manual run, Completed with its output, stored newest first", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    ctx.fake.reply({ content: "Checked in." }, { content: "Checked in again." });
    const run = await invoked({ realmId, agentId });
    expect(run).toMatchObject({
      agentId,
      realmId,
      status: "Completed",
      source: "manual",
      contextSnapshot: { agentId, realmId, mode: "thin" },
      attempts: 1,
      output: "Checked in.",
    });
    expect(run.id).toMatch(/^run-[0-9a-f-]{36}$/);
    expect(Date.parse(run.finishedAt)).toBeGreaterThanOrEqual(Date.parse(run.startedAt));
    const second = await invoked({ realmId, agentId });
    // No pulse is registered, yet the runs are there to see.
    const { config, recentRuns } = await statusOf(ctx.server, realmId, agentId);
    expect(config).toBeNull();
    expect(recentRuns.map((r: { id: string }) => r.id)).toEqual([second.id, run.id]);
  });

  it("tells the model it was invoked via pulse, with the context in its prompt, in one continuing session", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    await invoked({ realmId, agentId });
    await invoked({ realmId, agentId });
    const [first, second] = ctx.fake.requests as Array<Record<string, unknown>>;
    expect(systemPromptOf(first ?? {})).toContain(JSON.stringify({ agentId, realmId, mode: "thin" }));
    const messages = (second?.messages ?? []) as Array<{ role: string; content: unknown }>;
    // The second pulse sees the first one's exchange: the session continues.
    expect(messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual([
      PULSE_MESSAGE,
      PULSE_MESSAGE,
    ]);
    const { sessions } = await json(await ctx.server.request(`/api/agents/${agentId}/sessions`));
    expect(sessions.map((s: { id: string }) => s.id)).toEqual([`pulse:${agentId}`]);
  });

  it("builds a full context from missions, budget, chain and directives, falling back when a read fails", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    const probe = ctx.server.service.engine.worker("probe");
    probe.registerFunction({ id: "mission::list" }, (payload) => ({
      missions: [{ id: "msn-1", asked: payload }],
    }));
    probe.registerFunction({ id: "hierarchy::chain" }, () => {
      throw new Error("hierarchy down");
    });
    await registered(ctx.server, { realmId, agentId, cron: NEVER, contextMode: "Full" });
    const run = await invoked({ realmId, agentId });
    expect(run.contextSnapshot).toMatchObject({
      agentId,
      realmId,
      mode: "full",
      missions: [{ id: "msn-1", asked: { realmId, assigneeId: agentId, status: "active" } }],
      budget: { allowed: true },
      chain: [],
    });
    expect(Array.isArray(run.contextSnapshot.directives)).toBe(true);
    expect(systemPromptOf(ctx.fake.requests[0] ?? {})).toContain('"id":"msn-1"');
    // The override wins over the stored mode.
    const thin = await invoked({ realmId, agentId, contextMode: "thin" });
    expect(thin.contextSnapshot).toEqual({ agentId, realmId, mode: "thin" });
  });

  it("puts the realm's real directives (Active ones only) and the agent's chain of command into a full context", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    const directive = await ctx.server.request("/api/directives", {
      method: "POST",
      json: { realmId, title: "Ship the pulse worker", level: "realm" },
    });
    expect(directive.status).toBe(201);
    // Directives that are no longer (or not yet again) in force stay out of the agent's context.
    for (const [title, status] of [
      ["Write the old scheduler", "Complete"],
      ["Port to another runtime", "Paused"],
    ]) {
      const created = await ctx.server.request("/api/directives", {
        method: "POST",
        json: { realmId, title, level: "realm" },
      });
      expect(created.status).toBe(201);
      const { id } = await json(created);
      const updated = await ctx.server.request(`/api/directives/${realmId}/${id}`, {
        method: "PATCH",
        json: { status },
      });
      expect(updated.status).toBe(200);
    }
    const node = await ctx.server.request("/api/hierarchy", {
      method: "POST",
      json: { realmId, agentId, title: "Night watch", capabilities: ["watch"], rank: 1 },
    });
    expect(node.status).toBeLessThan(300);
    const run = await invoked({ realmId, agentId, contextMode: "Full" });
    expect(run.contextSnapshot.directives).toEqual([
      expect.objectContaining({ title: "Ship the pulse worker" }),
    ]);
    expect(run.contextSnapshot.chain).toEqual([expect.objectContaining({ agentId, title: "Night watch" })]);
    expect(systemPromptOf(ctx.fake.requests[0] ?? {})).toContain("Ship the pulse worker");
    expect(systemPromptOf(ctx.fake.requests[0] ?? {})).not.toContain("Write the old scheduler");
    expect(systemPromptOf(ctx.fake.requests[0] ?? {})).not.toContain("Port to another runtime");
  });

  it("gives each full-context read 10 s, then falls back: a hung worker cannot stretch the run past its lease", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    const probe = ctx.server.service.engine.worker("probe");
    probe.registerFunction({ id: "mission::list" }, () => new Promise(() => undefined));
    const started = Date.now();
    const run = await invoked({ realmId, agentId, contextMode: "Full" });
    const took = Date.now() - started;
    expect(run).toMatchObject({ status: "Completed", contextSnapshot: { mode: "full", missions: [] } });
    expect(took).toBeGreaterThanOrEqual(CONTEXT_READ_TIMEOUT_MS - 100);
    expect(took).toBeLessThan(CONTEXT_READ_TIMEOUT_MS + 5_000);
  }, 30_000);

  it("fails a run whose agent does not answer within timeoutSecs", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    await registered(ctx.server, { realmId, agentId, cron: NEVER, timeoutSecs: 1 });
    ctx.fake.reply({ content: "too late", delayMs: 3000 });
    const run = await invoked({ realmId, agentId });
    expect(run).toMatchObject({ status: "Failed", attempts: 1 });
    expect(run.error).toContain("timed out after 1 s");
    expect(run).not.toHaveProperty("output");
  });

  it("retries a failing agent up to maxRetries more times", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    await registered(ctx.server, { realmId, agentId, cron: NEVER, maxRetries: 2 });
    ctx.fake.reply({ status: 400 }, { status: 400 }, { content: "third time lucky" });
    const run = await invoked({ realmId, agentId });
    expect(run).toMatchObject({ status: "Completed", attempts: 3, output: "third time lucky" });
    ctx.fake.reply({ status: 400 }, { status: 400 }, { status: 400 });
    const failed = await invoked({ realmId, agentId });
    expect(failed).toMatchObject({ status: "Failed", attempts: 3 });
    expect(failed.error).toContain("HTTP 400");
  });

  it("keeps at most 4000 characters of the output", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    ctx.fake.reply({ content: "x".repeat(5000) });
    expect((await invoked({ realmId, agentId })).output).toHaveLength(4000);
  });

  it("refuses a second run of an agent while one is going (409), and takes over a stale lease", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    ctx.fake.reply({ content: "slow", delayMs: 1500 });
    const first = invoke(ctx.server, { realmId, agentId });
    // The model has the request: the first run holds the agent's lease.
    await eventually(() => ctx.fake.requests.length === 1);
    const second = await invoke(ctx.server, { realmId, agentId });
    expect(second.status).toBe(409);
    expect((await json(second)).error).toContain("already running");
    expect((await first).status).toBe(200);

    const state = stateClient((request) => ctx.server.service.engine.trigger(request));
    const stale = {
      holder: "lease-dead",
      acquiredAt: "2020-01-01T00:00:00.000Z",
      expiresAt: "2020-01-01T01:00:00.000Z",
    };
    await state.set(LEASES_SCOPE, `${realmId}/${agentId}`, stale);
    expect((await invoked({ realmId, agentId })).status).toBe("Completed");
    expect(await state.get(LEASES_SCOPE, `${realmId}/${agentId}`)).toBeNull();
  });

  it("refuses unknown agents (404) and missing fields (400)", async () => {
    const { realmId } = await setup(ctx.server);
    const missing = await invoke(ctx.server, { realmId, agentId: "agent-nope" });
    expect(missing.status).toBe(404);
    const invalid = await invoke(ctx.server, { realmId });
    expect(invalid.status).toBe(400);
    expect((await json(invalid)).error).toContain("agentId");
  });
});

describe("run retention", () => {
  it("deletes the run 1000 places back as each run is written, without scanning", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    const state = stateClient((request) => ctx.server.service.engine.trigger(request));
    // Pretend 1000 runs were written: the oldest is still stored, the counter says 1000.
    await state.set(runsScope(realmId), runKey(agentId, 1), { id: "run-oldest" });
    await state.set(SEQUENCES_SCOPE, `${realmId}/${agentId}`, { seq: 1000 });
    const run = await invoked({ realmId, agentId });
    expect(await state.get(runsScope(realmId), runKey(agentId, 1))).toBeNull();
    expect(await state.get(runsScope(realmId), runKey(agentId, 1001))).toMatchObject({ id: run.id });
    expect(runKey(agentId, 1001) < runKey(agentId, 1000)).toBe(true);
  });
});
