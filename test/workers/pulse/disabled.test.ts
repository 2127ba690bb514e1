import { describe, expect, it } from "vitest";
import type { TelemetryEvent } from "../../../src/engine/telemetry.ts";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";
import { eventually } from "../../helpers/iii.ts";
import { registered, setup, statusOf, toggle } from "./helpers.ts";

const ctx = serverWithFakeModel();
const EVERY_SECOND = "* * * * * *";

describe("a disabled pulse", () => {
  it("reports (logs and counts) its skipped tick once when it becomes disabled, not at every tick", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    const skips: TelemetryEvent[] = [];
    ctx.server.service.engine.onTelemetry((event) => {
      if (event.type === "pulse_run" && event.agentId === agentId && event.reason === "disabled")
        skips.push(event);
    });
    await registered(ctx.server, { realmId, agentId, cron: EVERY_SECOND });
    expect((await toggle(ctx.server, realmId, agentId, { enabled: false })).status).toBe(200);
    // Three disabled ticks, each recorded as the last tick (status still says why the agent sleeps).
    const ticks = new Set<string>();
    await eventually(async () => {
      const { lastTick } = await statusOf(ctx.server, realmId, agentId);
      if (lastTick?.reason === "disabled") ticks.add(lastTick.scheduledTime);
      return ticks.size >= 3;
    }, 15_000);
    expect(skips).toHaveLength(1);

    // Enabled, then disabled again: reported once more.
    expect((await toggle(ctx.server, realmId, agentId, { enabled: true })).status).toBe(200);
    await eventually(
      async () => (await statusOf(ctx.server, realmId, agentId)).lastTick?.outcome === "ran",
      15_000,
    );
    expect((await toggle(ctx.server, realmId, agentId, { enabled: false })).status).toBe(200);
    await eventually(() => skips.length === 2, 15_000);
  }, 60_000);
});
