import { describe, expect, it } from "vitest";
import { archiveRealm, newRealm, realmKey } from "../../helpers/control-plane.ts";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";
import { json } from "../../helpers/server.ts";
import { pulseTriggers, registered, registerPulse, setup, statusOf, toggle } from "./helpers.ts";

const ctx = serverWithFakeModel();
const NEVER = "0 0 0 1 1 *"; // midnight on January 1st: never fires during a test

describe("pulse::register", () => {
  it("stores the config with its defaults and schedules one cron trigger with the agent's ids as data", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    const config = await registered(ctx.server, { realmId, agentId, cron: NEVER });
    expect(config).toMatchObject({ realmId, agentId, cron: NEVER, enabled: true, contextMode: "Thin" });
    expect(config.createdAt).toBe(config.updatedAt);
    expect(config).not.toHaveProperty("timeoutSecs");
    const triggers = pulseTriggers(ctx.server, agentId);
    expect(triggers).toHaveLength(1);
    expect(triggers[0]?.config).toEqual({ expression: NEVER, data: { agentId, realmId } });
  });

  it("accepts lowercase context modes and stores them capitalised, with timeout and retries", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    const config = await registered(ctx.server, {
      realmId,
      agentId,
      cron: NEVER,
      contextMode: "full",
      timeoutSecs: 30,
      maxRetries: 2,
    });
    expect(config).toMatchObject({ contextMode: "Full", timeoutSecs: 30, maxRetries: 2 });
  });

  it.each([
    ["five fields", "*/5 * * * *", "expected six fields"],
    ["garbage", "every day at noon", "Invalid cron expression"],
    ["an out-of-range second", "61 * * * * *", "Invalid cron expression"],
    [
      "a date that never comes (February 31st)",
      "0 0 0 31 2 *",
      'Invalid cron expression "0 0 0 31 2 *": it never fires',
    ],
  ])("refuses %s with 400 failed to register cron trigger", async (_label, cron, cause) => {
    const { realmId, agentId } = await setup(ctx.server);
    const response = await registerPulse(ctx.server, { realmId, agentId, cron });
    expect(response.status).toBe(400);
    const { error } = await json(response);
    expect(error).toMatch(/^failed to register cron trigger: /);
    expect(error).toContain(cause);
    expect(pulseTriggers(ctx.server, agentId)).toHaveLength(0);
    expect((await ctx.server.request(`/api/pulse/${realmId}/${agentId}`)).status).toBe(404);
  });

  it.each([
    [{ cron: undefined }, "cron"],
    [{ contextMode: "Medium" }, "contextMode"],
    [{ timeoutSecs: 0 }, "timeoutSecs"],
    [{ timeoutSecs: 3601 }, "timeoutSecs"],
    [{ timeoutSecs: 1.5 }, "timeoutSecs"],
    [{ maxRetries: 11 }, "maxRetries"],
    [{ maxRetries: -1 }, "maxRetries"],
    [{ extra: 1 }, "extra"],
  ])("refuses %j with 400 naming %s", async (change, field) => {
    const { realmId, agentId } = await setup(ctx.server);
    const response = await registerPulse(ctx.server, { realmId, agentId, cron: NEVER, ...change });
    expect(response.status).toBe(400);
    expect((await json(response)).error).toContain(field);
  });

  it("refuses an agent that does not exist in the realm with 404", async () => {
    const { realmId } = await setup(ctx.server);
    const response = await registerPulse(ctx.server, { realmId, agentId: "agent-missing", cron: NEVER });
    expect(response.status).toBe(404);
    expect((await json(response)).error).toContain("agent-missing");
  });

  it("re-registering replaces the trigger (never a second one), keeps createdAt and enables again", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    const first = await registered(ctx.server, { realmId, agentId, cron: NEVER, maxRetries: 3 });
    expect((await toggle(ctx.server, realmId, agentId, { enabled: false })).status).toBe(200);
    const second = await registered(ctx.server, { realmId, agentId, cron: "0 30 9 * * 1-5" });
    expect(second).toMatchObject({ cron: "0 30 9 * * 1-5", enabled: true, createdAt: first.createdAt });
    expect(second).not.toHaveProperty("maxRetries");
    const triggers = pulseTriggers(ctx.server, agentId);
    expect(triggers).toHaveLength(1);
    expect(triggers[0]?.config).toMatchObject({ expression: "0 30 9 * * 1-5" });
    // A refused re-register leaves the working pulse as it was.
    expect((await registerPulse(ctx.server, { realmId, agentId, cron: "* * *" })).status).toBe(400);
    expect(pulseTriggers(ctx.server, agentId)).toHaveLength(1);
    expect((await statusOf(ctx.server, realmId, agentId)).config.cron).toBe("0 30 9 * * 1-5");
  });

  it("answers a key bound to another realm as if nothing were there (404)", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    const key = await realmKey(ctx.server, await newRealm(ctx.server, "other"));
    const response = await ctx.server.request("/api/pulse/register", {
      method: "POST",
      key,
      json: { realmId, agentId, cron: NEVER },
    });
    expect(response.status).toBe(404);
    expect((await ctx.server.request(`/api/pulse/${realmId}/${agentId}`, { key })).status).toBe(404);
  });
});

describe("pulse::toggle and pulse::status", () => {
  it("tells when an enabled pulse fires next, in UTC", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    await registered(ctx.server, { realmId, agentId, cron: "0 30 9 * * *" });
    const { nextFireAt } = await statusOf(ctx.server, realmId, agentId);
    const next = new Date(nextFireAt);
    expect([next.getUTCHours(), next.getUTCMinutes(), next.getUTCSeconds()]).toEqual([9, 30, 0]);
    expect(next.getTime() - Date.now()).toBeGreaterThan(0);
    expect(next.getTime() - Date.now()).toBeLessThanOrEqual(24 * 3600_000);
  });

  it("toggles the enabled flag and returns the updated config", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    await registered(ctx.server, { realmId, agentId, cron: NEVER });
    const off = await toggle(ctx.server, realmId, agentId, { enabled: false });
    expect(off.status).toBe(200);
    expect(await json(off)).toMatchObject({ agentId, realmId, enabled: false });
    expect(await statusOf(ctx.server, realmId, agentId)).toMatchObject({
      config: { enabled: false },
      nextFireAt: null,
    });
    const on = await json(await toggle(ctx.server, realmId, agentId, { enabled: true }));
    expect(on.enabled).toBe(true);
    // Disabled pulses keep their trigger: their ticks are skipped and recorded.
    expect(pulseTriggers(ctx.server, agentId)).toHaveLength(1);
  });

  it.each([[{}], [{ enabled: "false" }], [{ enabled: 0 }], [{ enabled: null }]])(
    "refuses %j with 400 naming enabled",
    async (body) => {
      const { realmId, agentId } = await setup(ctx.server);
      await registered(ctx.server, { realmId, agentId, cron: NEVER });
      const response = await toggle(ctx.server, realmId, agentId, body);
      expect(response.status).toBe(400);
      expect((await json(response)).error).toContain("enabled");
    },
  );

  it("answers 404 for an agent without a pulse", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    const toggled = await toggle(ctx.server, realmId, agentId, { enabled: true });
    expect(toggled.status).toBe(404);
    expect((await json(toggled)).error).toBe(`No pulse registered for agent ${agentId} in realm ${realmId}`);
    expect((await ctx.server.request(`/api/pulse/${realmId}/${agentId}`)).status).toBe(404);
  });

  it("shows the config, no runs and no tick yet; limit must be 1..100", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    await registered(ctx.server, { realmId, agentId, cron: NEVER });
    const body = await statusOf(ctx.server, realmId, agentId);
    expect(body).toMatchObject({ config: { agentId, cron: NEVER }, recentRuns: [], lastTick: null });
    for (const limit of [0, 101, "x"]) {
      const response = await ctx.server.request(`/api/pulse/${realmId}/${agentId}?limit=${limit}`);
      expect(response.status).toBe(400);
      expect((await json(response)).error).toContain("limit");
    }
  });
});

describe("internal functions", () => {
  const call = (function_id: string, payload: unknown) =>
    ctx.server.service.engine.trigger({ function_id, payload }) as Promise<Record<string, unknown>>;

  it("a tick of a pulse that no longer exists stops its trigger", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    await registered(ctx.server, { realmId, agentId, cron: NEVER });
    await call("state::delete", { scope: "pulse_configs", key: `${realmId}/${agentId}` });
    expect(await call("pulse::tick", { realmId, agentId, trigger: "cron" })).toEqual({
      skipped: true,
      reason: "not_registered",
    });
    expect(pulseTriggers(ctx.server, agentId)).toHaveLength(0);
  });

  it("purge_realm stops the realm's pulses and deletes their records, and can be repeated", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    await registered(ctx.server, { realmId, agentId, cron: NEVER });
    expect(
      (await ctx.server.request("/api/pulse/invoke", { method: "POST", json: { realmId, agentId } })).status,
    ).toBe(200);
    expect(await call("pulse::purge_realm", { realmId })).toEqual({ purged: true, pulses: 1 });
    expect(pulseTriggers(ctx.server, agentId)).toHaveLength(0);
    expect((await ctx.server.request(`/api/pulse/${realmId}/${agentId}`)).status).toBe(404);
    expect(await call("pulse::purge_realm", { realmId })).toEqual({ purged: true, pulses: 0 });
  });

  it("purge_realm and purge_agent refuse realm-bound and anonymous callers, even of their own realm", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    await registered(ctx.server, { realmId, agentId, cron: NEVER });
    const own = { kind: "realm", realmId, keyId: "key-own" } as const;
    for (const [function_id, payload] of [
      ["pulse::purge_realm", { realmId }],
      ["pulse::purge_agent", { realmId, agentId }],
    ] as const) {
      await expect(
        ctx.server.service.engine.trigger({ function_id, payload, auth: own }),
      ).rejects.toMatchObject({ code: "forbidden", message: `${function_id} requires an admin key` });
      await expect(
        ctx.server.service.engine.trigger({ function_id, payload, auth: { kind: "anonymous" } }),
      ).rejects.toMatchObject({ code: "unauthorized" });
    }
    // Nothing was purged: the pulse is still there and scheduled.
    expect((await statusOf(ctx.server, realmId, agentId)).config).toMatchObject({ agentId });
    expect(pulseTriggers(ctx.server, agentId)).toHaveLength(1);
    // An admin key may (the system, as the cascades call them, is tested above).
    const admin = { kind: "admin", keyId: "key-admin" } as const;
    expect(
      await ctx.server.service.engine.trigger({
        function_id: "pulse::purge_agent",
        payload: { realmId, agentId },
        auth: admin,
      }),
    ).toEqual({ purged: true });
    expect(pulseTriggers(ctx.server, agentId)).toHaveLength(0);
  });

  it("a realm delete (when the realm worker is there) stops the realm's pulses; an archived realm refuses them", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    await registered(ctx.server, { realmId, agentId, cron: NEVER });
    await archiveRealm(ctx.server, realmId);
    expect((await registerPulse(ctx.server, { realmId, agentId, cron: NEVER })).status).toBe(409);
    expect((await toggle(ctx.server, realmId, agentId, { enabled: false })).status).toBe(409);
    expect((await ctx.server.request(`/api/realms/${realmId}`, { method: "DELETE" })).status).toBeLessThan(
      300,
    );
    expect(pulseTriggers(ctx.server, agentId)).toHaveLength(0);
    expect((await ctx.server.request(`/api/pulse/${realmId}/${agentId}`)).status).toBe(404);
  });
});
