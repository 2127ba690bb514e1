import { spawnSync } from "node:child_process";
import { lstatSync, mkdirSync, readdirSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { snapshotsDir, workspaceDir } from "../../../../src/workers/tools/sandbox.ts";
import { toolsServer } from "../setup.ts";

/*
 * What a sandboxed program leaves in its workspace for a snapshot to copy: a FIFO (Node's cp failed on
 * it, a 500, and opening one blocks) and set-id bits (which a root-made copy kept until it was handed to
 * the workspace's owner).
 */
const env = toolsServer({ AGENTOS_WORKSPACE_QUOTA_MB: "16" });

const python = (code: string) =>
  env.tool<{ exitCode: number; stderr: string }>("tool::shell_exec", {
    command: "python3",
    args: ["-c", code],
    timeoutMs: 30_000,
  });

const setIdBits = (path: string) => lstatSync(path).mode & 0o7000;

describe("special files and set-id bits in snapshots", () => {
  it("refuses to snapshot a workspace holding a FIFO, with a 400 naming it", async () => {
    const { agentId } = await env.agent();
    await env.tool("tool::file_write", { path: "a.txt", content: "a" });
    const made = await python("import os; os.mkdir('sub'); os.mkfifo('sub/pipe')");
    expect(made.exitCode, made.stderr).toBe(0);
    const refused = await env.failure("tool::snapshot_create", {});
    expect(refused.status, refused.message).toBe(400);
    expect(refused.message).toContain("a FIFO at sub/pipe");
    const dir = snapshotsDir(realpathSync(env.server.dataDir), agentId);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("restores a snapshot holding a FIFO or socket, leaving them out, without blocking", async () => {
    const { agentId } = await env.agent();
    await env.tool("tool::file_write", { path: "a.txt", content: "a" });
    const { snapshot } = await env.tool<{ snapshot: { id: string } }>("tool::snapshot_create", {});
    // A snapshot made before special files were refused.
    const kept = join(snapshotsDir(realpathSync(env.server.dataDir), agentId), snapshot.id);
    mkdirSync(join(kept, "sub"));
    expect(spawnSync("mkfifo", [join(kept, "pipe"), join(kept, "sub", "pipe")]).status).toBe(0);
    // Bound by a relative name: the snapshot's full path is longer than a socket address may be.
    const socket = spawnSync("python3", ["-c", "import socket; socket.socket(socket.AF_UNIX).bind('sock')"], {
      cwd: kept,
    });
    expect(socket.status, socket.stderr.toString()).toBe(0);
    expect(await env.tool("tool::snapshot_restore", { snapshotId: snapshot.id })).toMatchObject({
      restored: snapshot.id,
    });
    const root = workspaceDir(realpathSync(env.server.dataDir), agentId);
    expect(readdirSync(root).sort()).toEqual(["a.txt", "sub"]);
    expect(readdirSync(join(root, "sub"))).toEqual([]);
  });

  it("keeps no setuid, setgid or sticky bit in a snapshot or a restored workspace", async () => {
    const { agentId } = await env.agent();
    const made = await python(
      "import os; open('s.sh', 'w').write('#!/bin/sh\\n'); os.chmod('s.sh', 0o6755); os.mkdir('g'); os.chmod('g', 0o3775); open('g/f', 'w').write('f')",
    );
    expect(made.exitCode, made.stderr).toBe(0);
    const root = workspaceDir(realpathSync(env.server.dataDir), agentId);
    expect(setIdBits(join(root, "s.sh"))).toBe(0o6000);
    const { snapshot } = await env.tool<{ snapshot: { id: string } }>("tool::snapshot_create", {});
    const kept = join(snapshotsDir(realpathSync(env.server.dataDir), agentId), snapshot.id);
    expect(setIdBits(join(kept, "s.sh"))).toBe(0);
    expect(setIdBits(join(kept, "g"))).toBe(0);
    expect(statSync(join(kept, "s.sh")).mode & 0o777).toBe(0o755);
    // A snapshot that kept them (made before they were cleared) is restored without them.
    spawnSync("chmod", ["6755", join(kept, "s.sh")]);
    spawnSync("chmod", ["3775", join(kept, "g")]);
    writeFileSync(join(root, "later.txt"), "later");
    await env.tool("tool::snapshot_restore", { snapshotId: snapshot.id });
    expect(readdirSync(root).sort()).toEqual(["g", "s.sh"]);
    expect(setIdBits(join(root, "s.sh"))).toBe(0);
    expect(setIdBits(join(root, "g"))).toBe(0);
    expect(statSync(join(root, "g")).mode & 0o777).toBe(0o775);
  });
});
