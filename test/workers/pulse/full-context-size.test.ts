import { describe, expect, it } from "vitest";
import { MAX_TURN_CONTEXT_BYTES } from "../../../src/shared/limits.ts";
import { call, realmKey } from "../../helpers/control-plane.ts";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";
import { registered, setup, systemPromptOf } from "./helpers.ts";

const ctx = serverWithFakeModel();
const NEVER = "0 0 0 1 1 *";

describe("a Full pulse context", () => {
  it("fits what agent::chat takes however many long directives the realm has: the run completes, saying what was left out", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    const key = await realmKey(ctx.server, realmId);
    // Each directive at the longest description allowed: seven of them pass the context limit.
    for (let i = 0; i < 8; i++) {
      const created = await call(
        ctx.server,
        "POST",
        "/api/directives",
        { realmId, title: `goal ${i}`, level: "realm", description: "d".repeat(10_000) },
        key,
      );
      expect(created.status).toBe(201);
    }
    await registered(ctx.server, { realmId, agentId, cron: NEVER, contextMode: "Full" });
    const run = await call(ctx.server, "POST", "/api/pulse/invoke", { realmId, agentId }, key);
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ status: "Completed", output: "ok" });
    const snapshot = run.body.contextSnapshot;
    expect(Buffer.byteLength(JSON.stringify(snapshot))).toBeLessThanOrEqual(MAX_TURN_CONTEXT_BYTES);
    expect(snapshot.directives.length).toBeGreaterThan(0);
    expect(snapshot.directives.length + snapshot.omitted.directives).toBe(8);
    expect(systemPromptOf(ctx.fake.requests[0] ?? {})).toContain('"omitted":{"directives":');
  });

  it("is passed whole when it fits", async () => {
    const { realmId, agentId } = await setup(ctx.server);
    await call(ctx.server, "POST", "/api/directives", { realmId, title: "goal", level: "realm" });
    await registered(ctx.server, { realmId, agentId, cron: NEVER, contextMode: "Full" });
    const run = await call(ctx.server, "POST", "/api/pulse/invoke", { realmId, agentId });
    expect(run.body.status).toBe("Completed");
    expect(run.body.contextSnapshot.directives).toHaveLength(1);
    expect(run.body.contextSnapshot).not.toHaveProperty("omitted");
  });
});
