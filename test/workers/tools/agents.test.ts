import { describe, expect, it } from "vitest";
import { MAX_CHANNEL_SENDS_PER_MINUTE } from "../../../src/workers/tools/agents/index.ts";
import { call, createAgent, newRealm } from "../../helpers/control-plane.ts";
import { toolsServer } from "./setup.ts";

const env = toolsServer();

describe("tools that act on other agents", () => {
  it("spawns a sub-agent in its realm with no more rights than its parent, and talks to it", async () => {
    const parent = await env.agent({ toolProfile: "chat" });
    env.fake.reply({ content: "child here" });
    const spawned = await env.tool<{ agentId: string; depth: number; response: string }>(
      "tool::agent_spawn",
      { name: "helper", message: "hello" },
    );
    expect(spawned).toMatchObject({ depth: 1, response: "child here" });
    const child = await call(env.server, "GET", `/api/agents/${spawned.agentId}`);
    expect(child.body).toMatchObject({
      realmId: parent.realmId,
      capabilities: ["tool::web_search", "tool::web_fetch", "memory::recall", "memory::store", "memory::*"],
      metadata: { spawnedBy: parent.agentId, spawnDepth: 1, spawnRoot: parent.agentId },
    });
    const { agents } = await env.tool<{ agents: Array<{ id: string }> }>("tool::agent_list", {});
    expect(agents.map((a) => a.id).sort()).toEqual([parent.agentId, spawned.agentId].sort());
  });

  it("counts every sub-agent of a tree against its root, so nesting does not multiply the quota", async () => {
    const root = await env.agent({ toolProfile: "chat" });
    const child = await env.tool<{ agentId: string }>("tool::agent_spawn", { name: "child" });
    const asChild = { agentId: child.agentId, realmId: root.realmId };
    const grandchild = await env.tool<{ agentId: string; depth: number }>(
      "tool::agent_spawn",
      { name: "grandchild" },
      asChild,
    );
    expect(grandchild.depth).toBe(2);
    const stored = await call(env.server, "GET", `/api/agents/${grandchild.agentId}`);
    expect(stored.body.metadata).toMatchObject({ spawnedBy: child.agentId, spawnRoot: root.agentId });
    // The root has 2 of its 20: 18 more anywhere in its tree, then none.
    for (let i = 0; i < 18; i++) await env.tool("tool::agent_spawn", { name: `more-${i}` }, asChild);
    const refused = await env.failure("tool::agent_spawn", { name: "one-too-many" }, asChild);
    expect(refused.status).toBe(403);
    expect(refused.message).toContain(`Agent ${root.agentId}'s sub-agents`);
    expect((await env.failure("tool::agent_spawn", { name: "nor-here" })).status).toBe(403);
  });

  it("sends to and delegates to an agent of its realm, never one of another realm, and limits the rate", async () => {
    const sender = await env.agent();
    const peer = await createAgent(env.server, sender.realmId, { name: "peer" });
    env.fake.reply({ content: "got it" }, { content: "done it" });
    expect(await env.tool("tool::agent_send", { to: peer, message: "hi" })).toMatchObject({
      response: "got it",
    });
    expect(await env.tool("tool::agent_delegate", { to: peer, task: "sum 1+1" })).toEqual({
      result: "done it",
    });
    const stranger = await createAgent(env.server, await newRealm(env.server), { name: "stranger" });
    expect([403, 404]).toContain(
      (await env.failure("tool::agent_send", { to: stranger, message: "hi" })).status,
    );
    for (let i = 0; i < 8; i++) await env.tool("tool::agent_send", { to: peer, message: `n${i}` });
    expect((await env.failure("tool::agent_send", { to: peer, message: "one too many" })).message).toContain(
      "messages this minute",
    );
  });

  it("snapshots the workspace and todos and restores them", async () => {
    await env.agent();
    await env.tool("tool::file_write", { path: "a.txt", content: "v1" });
    await env.tool("tool::todo_create", { title: "keep me" });
    const { snapshot } = await env.tool<{ snapshot: { id: string; files: number } }>(
      "tool::snapshot_create",
      { label: "before" },
    );
    expect(snapshot.files).toBe(1);
    await env.tool("tool::file_write", { path: "a.txt", content: "v2" });
    await env.tool("tool::file_write", { path: "b.txt", content: "new" });
    await env.tool("tool::todo_create", { title: "added later" });
    await env.tool("tool::snapshot_restore", { snapshotId: snapshot.id });
    expect(await env.tool("tool::file_read", { path: "a.txt" })).toMatchObject({ content: "v1" });
    expect((await env.failure("tool::file_read", { path: "b.txt" })).status).toBe(404);
    const { todos } = await env.tool<{ todos: Array<{ title: string }> }>("tool::todo_list", {});
    expect(todos.map((t) => t.title)).toEqual(["keep me"]);
    expect((await env.tool<{ snapshots: unknown[] }>("tool::snapshot_list", {})).snapshots).toHaveLength(1);
  });

  it("sends to a channel only through its binding, and only as the bound agent", async () => {
    const { agentId, realmId } = await env.agent();
    expect(
      (await env.failure("tool::channel_send", { channel: "slack:C-NONE", message: "hi" })).message,
    ).toContain("No binding of slack:C-NONE");
    const other = await createAgent(env.server, realmId, { name: "other" });
    await call(env.server, "POST", "/api/channels", {
      platform: "slack",
      channelId: "C-OTHER",
      agentId: other,
    });
    expect(
      (await env.failure("tool::channel_send", { channel: "slack:C-OTHER", message: "hi" })).status,
    ).toBe(403);
    await call(env.server, "POST", "/api/channels", { platform: "slack", channelId: "C-MINE", agentId });
    expect(await env.tool("tool::channel_send", { channel: "slack:C-MINE", message: "hi" })).toMatchObject({
      queued: expect.stringMatching(/^chj/),
    });
    expect(
      (await env.failure("tool::channel_send", { channel: "nowhere", message: "hi" })).message,
    ).toContain("<platform>:<channel>");
  });

  it("sends at most MAX_CHANNEL_SENDS_PER_MINUTE chat messages a minute (429), however steered", async () => {
    const { agentId } = await env.agent();
    await call(env.server, "POST", "/api/channels", { platform: "slack", channelId: "C-FLOOD", agentId });
    // Counted per minute: the last ones might fall in the next minute, so a few more are asked.
    const answers: number[] = [];
    for (let sent = 0; sent < MAX_CHANNEL_SENDS_PER_MINUTE + 3; sent++) {
      const payload = { channel: "slack:C-FLOOD", message: `m${sent}` };
      const status = await env.tool("tool::channel_send", payload).then(
        () => 200,
        (error: { status?: number }) => error.status ?? 500,
      );
      answers.push(status);
    }
    expect(answers).toContain(429);
    expect(answers.filter((status) => status === 200).length).toBeLessThanOrEqual(
      2 * MAX_CHANNEL_SENDS_PER_MINUTE,
    );
  });
});
