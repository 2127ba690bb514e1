import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { snapshotsDir } from "../../../src/workers/tools/sandbox.ts";
import { toolsServer } from "./setup.ts";

// A workspace quota of 1 MiB: snapshots together get as much, beside the workspace.
const env = toolsServer({ AGENTOS_WORKSPACE_QUOTA_MB: "1" });

describe("workspace snapshots", () => {
  it("hold together no more than the workspace's quota, and a deleted one frees its bytes", async () => {
    const { agentId } = await env.agent();
    await env.tool("tool::file_write", { path: "big.txt", content: "x".repeat(400 * 1024) });
    const first = await env.tool<{ snapshot: { id: string; bytes: number } }>("tool::snapshot_create", {});
    expect(first.snapshot.bytes).toBeGreaterThanOrEqual(400 * 1024);
    await env.tool("tool::snapshot_create", {});
    const refused = await env.failure("tool::snapshot_create", {});
    expect(refused.status).toBe(400);
    expect(refused.message).toContain("more than your workspace's quota (1 MiB)");
    const dir = snapshotsDir(env.server.dataDir, agentId);
    expect(existsSync(join(dir, first.snapshot.id))).toBe(true);
    const listed = await env.tool<{ snapshots: Array<{ id: string }> }>("tool::snapshot_list", {});
    expect(listed.snapshots).toHaveLength(2);
    expect(await env.tool("tool::snapshot_delete", { snapshotId: first.snapshot.id })).toEqual({
      deleted: first.snapshot.id,
    });
    expect(existsSync(join(dir, first.snapshot.id))).toBe(false);
    expect((await env.failure("tool::snapshot_restore", { snapshotId: first.snapshot.id })).status).toBe(404);
    await env.tool("tool::snapshot_create", {});
    expect((await env.failure("tool::snapshot_delete", { snapshotId: "snap-none" })).status).toBe(404);
  });
});
