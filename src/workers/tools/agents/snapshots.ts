import { chown, mkdir, readdir, rename } from "node:fs/promises";
import { dirname, join } from "node:path";
import { z } from "zod";
import { stateClient } from "../../../engine/state/client.ts";
import { nowIso } from "../../../shared/clock.ts";
import { badRequest, notFound } from "../../../shared/errors.ts";
import { newId } from "../../../shared/ids.ts";
import { removeTree } from "../../../shared/process/remove-tree.ts";
import { workspaceOwner } from "../../../shared/process/sandbox/owner.ts";
import { findExecutable, SAFE_PATH } from "../../../shared/process/supervise.ts";
import { agentIdField } from "../fields.ts";
import { snapshotsDir } from "../sandbox.ts";
import { todosScope } from "../schedule/todos.ts";
import { directorySize } from "../system/inspect.ts";
import { defineTool, type ToolContext } from "../tool.ts";
import { chownTree } from "../workspace-fs.ts";
import { checkTree, copyTree } from "./snapshot-tree.ts";

export const snapshotsScope = (agentId: string) => `tool_snapshots:${agentId}`;
const MAX_SNAPSHOTS = 20;
const MiB = 1024 * 1024;
const MAX_SNAPSHOT_BYTES = 200 * MiB;

interface Snapshot {
  id: string;
  label: string | null;
  createdAt: string;
  files: number;
  bytes: number;
  todos: unknown[];
}

/**
 * Copies the workspace into a new snapshot directory. With the sandbox, the copy runs inside it, as the
 * workspace's uid: a program racing the copy (swapping a directory for a link mid-walk) can then only
 * lead it to what the sandbox sees, never to the service's files.
 */
async function saveContent(ctx: ToolContext, root: string, to: string): Promise<void> {
  try {
    await copyOut(ctx, root, to);
    await checkTree(to);
  } catch (error) {
    await removeTree(to, "a snapshot's partial copy");
    throw error;
  }
}

async function copyOut(ctx: ToolContext, root: string, to: string): Promise<void> {
  if (!ctx.sandbox.settings.enabled) return copyTree(root, to);
  await mkdir(to, { recursive: true });
  const owner = workspaceOwner(root);
  if (owner) await chown(to, owner.uid, owner.gid);
  const cp = findExecutable("cp", SAFE_PATH);
  if (!cp) throw badRequest("cp is not installed on this host");
  const copy = await ctx.sandbox.start(
    {
      workspace: root,
      executable: cp,
      args: ["-a", "--no-preserve=ownership", "/workspace/.", "/snapshot/"],
      binds: [{ host: to, inside: "/snapshot" }],
      fileLimitBytes: MAX_SNAPSHOT_BYTES,
    },
    { timeoutMs: 120_000, killGraceMs: 0 },
  );
  const finished = await copy.done;
  if (finished.exitCode !== 0)
    throw badRequest(`Your workspace could not be copied: ${finished.stderr.trim().slice(0, 2000)}`);
  await removeTree(join(to, ".tmp"), "a snapshot's scratch space");
}

/**
 * Puts a snapshot's content in place of the workspace's without going through any path inside the
 * workspace, where its programs may plant links at any time: the copy is made and handed to the owner in
 * a staging directory beside the workspace (out of their reach), and entries are moved out and in by
 * rename, which replaces a link rather than following it.
 */
async function replaceContent(snapshot: string, root: string): Promise<void> {
  const staging = join(dirname(root), `.restore-${newId("tmp")}`);
  const [fresh, old] = [join(staging, "new"), join(staging, "old")];
  try {
    await copyTree(snapshot, fresh);
    await chownTree(root, fresh);
    await mkdir(old);
    for (const entry of await readdir(root)) await rename(join(root, entry), join(old, entry));
    for (const entry of await readdir(fresh)) {
      // Something created meanwhile under the same name (a non-empty directory cannot be replaced) goes too.
      await rename(join(fresh, entry), join(root, entry)).catch(async () => {
        await rename(join(root, entry), join(old, `${entry}.${newId("tmp")}`));
        await rename(join(fresh, entry), join(root, entry));
      });
    }
  } finally {
    // What the workspace held before (moved here) may be nested past PATH_MAX.
    await removeTree(staging, "the workspace's replaced files");
  }
}

const snapshotCreate = defineTool({
  id: "tool::snapshot_create",
  actsFor: "agent",
  description: `Save your workspace's files and your todo list as a snapshot you can restore later (at most ${MAX_SNAPSHOTS}, together no larger than your workspace's quota): {snapshot}.`,
  input: z.strictObject({ agentId: agentIdField, label: z.string().max(200).optional() }),
  async run({ agentId, label }, ctx) {
    const root = await ctx.workspace(agentId);
    const state = stateClient(ctx.trigger);
    const { items } = await state.list<Snapshot>(snapshotsScope(agentId), { limit: MAX_SNAPSHOTS + 1 });
    if (items.length >= MAX_SNAPSHOTS)
      throw badRequest(`You have ${MAX_SNAPSHOTS} snapshots: delete one first (snapshot_delete)`);
    const size = await directorySize(root);
    if (!size.complete || size.bytes > MAX_SNAPSHOT_BYTES)
      throw badRequest(
        `Your workspace is too large to snapshot (over ${MAX_SNAPSHOT_BYTES} bytes or 100000 files)`,
      );
    const todos: unknown[] = [];
    for await (const { value } of state.scan(todosScope(agentId))) todos.push(value);
    const id = newId("snap");
    const to = join(snapshotsDir(ctx.dataDir, agentId), id);
    await saveContent(ctx, root, to);
    // Measured as copied (the workspace may have changed since it was measured): snapshots live outside
    // the workspace's quota, so together they get one of their own, the same size.
    const copied = await directorySize(to);
    const held = items.reduce((sum, item) => sum + item.value.bytes, 0);
    const quota = ctx.sandbox.settings.limits.workspaceQuotaBytes;
    if (!copied.complete || held + copied.bytes > quota) {
      await removeTree(to, "a snapshot over the quota");
      throw badRequest(
        `Your snapshots would hold ${Math.ceil((held + copied.bytes) / MiB)} MiB, more than your workspace's quota (${Math.floor(quota / MiB)} MiB): delete one first (snapshot_delete)`,
      );
    }
    const snapshot: Snapshot = {
      id,
      label: label ?? null,
      createdAt: nowIso(),
      files: copied.files,
      bytes: copied.bytes,
      todos,
    };
    await state.set(snapshotsScope(agentId), snapshot.id, snapshot);
    const { todos: _saved, ...shown } = snapshot;
    return { snapshot: { ...shown, todos: todos.length } };
  },
});

const snapshotList = defineTool({
  id: "tool::snapshot_list",
  actsFor: "agent",
  description: "Your snapshots, oldest first: {snapshots: [{id, label, createdAt, files, bytes}]}.",
  input: z.strictObject({ agentId: agentIdField }),
  async run({ agentId }, ctx) {
    await ctx.workspace(agentId);
    const snapshots: unknown[] = [];
    for await (const { value } of stateClient(ctx.trigger).scan<Snapshot>(snapshotsScope(agentId))) {
      const { todos, ...rest } = value;
      snapshots.push({ ...rest, todos: todos.length });
    }
    return { snapshots };
  },
});

const snapshotRestore = defineTool({
  id: "tool::snapshot_restore",
  actsFor: "agent",
  description:
    "Put your workspace's files and your todo list back as a snapshot saved them (what changed since is replaced): {restored}.",
  input: z.strictObject({ agentId: agentIdField, snapshotId: z.string().min(1).max(256) }),
  risky: true,
  async run({ agentId, snapshotId }, ctx) {
    const root = await ctx.workspace(agentId);
    const state = stateClient(ctx.trigger);
    const snapshot = await state.get<Snapshot>(snapshotsScope(agentId), snapshotId);
    if (!snapshot) throw notFound(`You have no snapshot ${snapshotId}`);
    await ctx.sandbox.withoutPrograms(root, () =>
      replaceContent(join(snapshotsDir(ctx.dataDir, agentId), snapshot.id), root),
    );
    for await (const { key } of state.scan(todosScope(agentId))) await state.delete(todosScope(agentId), key);
    for (const todo of snapshot.todos as Array<{ id: string }>)
      await state.set(todosScope(agentId), todo.id, todo);
    return { restored: snapshot.id, files: snapshot.files, todos: snapshot.todos.length };
  },
});

const snapshotDelete = defineTool({
  id: "tool::snapshot_delete",
  actsFor: "agent",
  description: "Delete one of your snapshots, freeing its place and its bytes: {deleted}.",
  input: z.strictObject({ agentId: agentIdField, snapshotId: z.string().min(1).max(256) }),
  async run({ agentId, snapshotId }, ctx) {
    await ctx.workspace(agentId);
    const state = stateClient(ctx.trigger);
    const snapshot = await state.get<Snapshot>(snapshotsScope(agentId), snapshotId);
    if (!snapshot) throw notFound(`You have no snapshot ${snapshotId}`);
    await state.delete(snapshotsScope(agentId), snapshot.id);
    await removeTree(join(snapshotsDir(ctx.dataDir, agentId), snapshot.id), `snapshot ${snapshot.id}`);
    return { deleted: snapshot.id };
  },
});

export const snapshotTools = [snapshotCreate, snapshotList, snapshotRestore, snapshotDelete];
