import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { AppError } from "../../../src/shared/errors.ts";
import { Sandbox } from "../../../src/shared/process/sandbox/index.ts";
import { snapshotsDir, workspaceDir } from "../../../src/workers/tools/sandbox.ts";
import { call, createAgent } from "../../helpers/control-plane.ts";
import { toolsServer } from "./setup.ts";

/*
 * A sandboxed program nests directories (by relative paths, which have no length limit) until their
 * path from the host's root is longer than PATH_MAX (4096 bytes): Node's recursive rm fails there with
 * ENAMETOOLONG, which left a deleted agent's files behind (and stopped a realm's purge).
 */
const env = toolsServer({ AGENTOS_WORKSPACE_QUOTA_MB: "16" });

const NEST = `
import os
for _ in range(20):
    os.mkdir("d" * 250)
    os.chdir("d" * 250)
open("deepest.txt", "w").write("x")
`;

async function nested(as: { agentId: string; realmId: string }): Promise<string> {
  // The run is stopped for nesting past what can be measured, but what it made stays.
  await env.tool("tool::shell_exec", { command: "python3", args: ["-c", NEST], timeoutMs: 30_000 }, as);
  const root = workspaceDir(realpathSync(env.server.dataDir), as.agentId);
  expect(spawnSync("find", [root, "-name", "deepest.txt"]).stdout.toString()).toContain("deepest.txt");
  return root;
}

describe("a workspace nested deeper than PATH_MAX", () => {
  it("goes with its agent", async () => {
    const who = await env.agent();
    const root = await nested(who);
    // A snapshot directory as deep (made by the service's own hand here) goes too.
    const snapshots = snapshotsDir(realpathSync(env.server.dataDir), who.agentId);
    mkdirSync(snapshots, { recursive: true });
    spawnSync("python3", ["-c", NEST], { cwd: snapshots });
    const deleted = await env.server.request(`/api/agents/${who.agentId}`, { method: "DELETE" });
    expect(deleted.status, await deleted.text()).toBeLessThan(300);
    expect(existsSync(root)).toBe(false);
    expect(existsSync(snapshots)).toBe(false);
  });

  it("goes with its realm, and the realm's other agents' files too", async () => {
    const deep = await env.agent();
    const root = await nested(deep);
    const other = await env.agent();
    await env.tool("tool::file_write", { path: "mine.txt", content: "x" }, other);
    const otherRoot = workspaceDir(realpathSync(env.server.dataDir), other.agentId);
    const removed = await call(env.server, "DELETE", `/api/realms/${deep.realmId}`);
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(existsSync(root)).toBe(false);
    expect(existsSync(otherRoot)).toBe(true);
    expect((await call(env.server, "DELETE", `/api/realms/${other.realmId}`)).status).toBe(200);
    expect(existsSync(otherRoot)).toBe(false);
  });

  it("is refused a snapshot with a 400, leaving no partial copy behind", async () => {
    const who = await env.agent();
    await nested(who);
    const refused = await env.failure("tool::snapshot_create", {}, who);
    expect(refused.status, refused.message).toBe(400);
    const snapshots = snapshotsDir(realpathSync(env.server.dataDir), who.agentId);
    expect(existsSync(snapshots) ? spawnSync("ls", ["-A", snapshots]).stdout.toString() : "").toBe("");
  });

  it("still restores a snapshot over it", async () => {
    const who = await env.agent();
    await env.tool("tool::file_write", { path: "kept.txt", content: "kept" }, who);
    const { snapshot } = await env.tool<{ snapshot: { id: string } }>("tool::snapshot_create", {}, who);
    const root = await nested(who);
    await env.tool("tool::snapshot_restore", { snapshotId: snapshot.id }, who);
    expect(spawnSync("ls", ["-A", root]).stdout.toString().trim()).toBe("kept.txt");
    // Nothing is left beside the workspace either (the restore's staging directory).
    const workspaces = join(realpathSync(env.server.dataDir), "workspaces");
    const staged = spawnSync("ls", ["-A", workspaces]).stdout.toString();
    expect(staged).not.toContain(".restore-");
    writeFileSync(join(root, "after.txt"), "x");
  });

  it("that cannot be removed does not spare the realm's other agents, and a retry finishes", async () => {
    const stuck = await env.agent();
    const other = await createAgent(env.server, stuck.realmId, { toolProfile: "full" });
    const dataDir = realpathSync(env.server.dataDir);
    await env.tool("tool::file_write", { path: "a.txt", content: "a" }, stuck);
    await env.tool("tool::file_write", { path: "b.txt", content: "b" }, { ...stuck, agentId: other });
    // Stands in for a tree even coreutils cannot remove (say, something mounted inside).
    const stuckRoot = workspaceDir(dataDir, stuck.agentId);
    const original = Sandbox.prototype.withoutPrograms;
    const spy = vi.spyOn(Sandbox.prototype, "withoutPrograms").mockImplementation(function (
      this: Sandbox,
      workspace,
      work,
    ) {
      if (workspace === stuckRoot) return Promise.reject(new AppError("internal", "Could not remove it"));
      return original.call(this, workspace, work) as never;
    });
    try {
      const failed = await call(env.server, "DELETE", `/api/realms/${stuck.realmId}`);
      expect(failed.status).toBe(500);
      expect(existsSync(workspaceDir(dataDir, other))).toBe(false);
      expect(existsSync(stuckRoot)).toBe(true);
    } finally {
      spy.mockRestore();
    }
    expect((await call(env.server, "DELETE", `/api/realms/${stuck.realmId}`)).status).toBe(200);
    expect(existsSync(stuckRoot)).toBe(false);
  });
});
