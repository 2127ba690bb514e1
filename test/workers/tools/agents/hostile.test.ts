import { describe, expect, it } from "vitest";
import { serialized } from "../../../../src/engine/state/cas.ts";
import { jobsScope } from "../../../../src/workers/tools/schedule/store.ts";
import { call, createAgent, spentBudget } from "../../../helpers/control-plane.ts";
import { toolsServer } from "../setup.ts";

const env = toolsServer();

/** Per-minute counters reset on the minute: a test of one starts with time to spare in its minute. */
async function freshMinute(): Promise<void> {
  const left = 60 - new Date().getUTCSeconds();
  if (left < 20) await new Promise((resolve) => setTimeout(resolve, left * 1000));
}

async function pendingApprovals(agentId: string): Promise<Array<{ callId: string; functionId: string }>> {
  const { body } = await call(env.server, "GET", `/api/agents/${agentId}/approvals?status=pending`);
  return body.approvals;
}

describe("a hostile model acting on other agents", () => {
  it("cannot shed its approval policies by spawning a sub-agent to make the call", async () => {
    const parent = await env.agent({
      tools: ["tool::agent_spawn", "tool::agent_send"],
      toolPolicies: { "tool::agent_send": { approval: "required" } },
    });
    const peer = await createAgent(env.server, parent.realmId, { name: "peer" });
    const { agentId: child } = await env.tool<{ agentId: string }>("tool::agent_spawn", {
      name: "proxy",
      toolProfile: "full",
    });
    const stored = await call(env.server, "GET", `/api/agents/${child}`);
    expect(stored.body.toolPolicies).toEqual({ "tool::agent_send": { approval: "required" } });
    // The child's own send waits for a decision, as its parent's would.
    const send = env.tool(
      "tool::agent_send",
      { to: peer, message: "hi" },
      { agentId: child, realmId: parent.realmId },
    );
    let pending: Array<{ callId: string; functionId: string }> = [];
    for (let i = 0; i < 100 && pending.length === 0; i++) {
      pending = await pendingApprovals(child);
      if (pending.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(pending).toMatchObject([{ functionId: "tool::agent_send" }]);
    await call(env.server, "POST", `/api/agents/${child}/approvals/${pending[0]?.callId}`, {
      approve: false,
    });
    await expect(send).rejects.toMatchObject({ status: 403 });
  });

  it("cannot escape its own budget by having a sub-agent it spawns do the paid work", async () => {
    const parent = await env.agent({ tools: ["tool::agent_spawn"] });
    await spentBudget(env.server, parent.realmId, parent.agentId);
    const refused = await env.failure("tool::agent_spawn", { name: "spender", message: "work hard" });
    expect(refused.status).toBe(402);
  });

  it("charges a sub-agent's turns to the root of its tree", async () => {
    const root = await env.agent({ tools: ["tool::agent_spawn"] });
    env.fake.reply({ content: "worked" });
    const child = await env.tool<{ agentId: string; response: string }>("tool::agent_spawn", {
      name: "worker",
      message: "work",
    });
    expect(child.response).toBe("worked");
    const { body } = await call(env.server, "GET", `/api/ledger/summary/${root.realmId}`);
    expect(Object.keys(body.breakdown)).toEqual([root.agentId]);
    expect(body.eventCount).toBe(1);
  });
});

describe("loops between agents", () => {
  it("stops a ping-pong between two agents a few turns deep, telling the model why", async () => {
    const a = await env.agent({ tools: ["tool::agent_send"] });
    const b = await createAgent(env.server, a.realmId, { name: "pong", tools: ["tool::agent_send"] });
    const sends = Array.from({ length: 12 }, (_, i) => ({
      toolCalls: [
        { name: "tool__agent_send", arguments: { to: i % 2 === 0 ? b : a.agentId, message: `ping ${i}` } },
      ],
    }));
    const before = env.fake.requests.length;
    env.fake.reply(...sends);
    const turn = await call(env.server, "POST", `/api/agents/${a.agentId}/message`, { message: "start" });
    expect(turn.status, JSON.stringify(turn.body)).toBe(200);
    const requests = JSON.stringify(env.fake.requests.slice(before));
    expect(requests).toContain("already passes through 5 agents");
    // The nesting stopped there: the first turn and five nested ones, never a seventh.
    const turnsStarted = env.fake.requests
      .slice(before)
      .filter((request) => (request.messages as Array<{ role: string }>).at(-1)?.role === "user");
    expect(turnsStarted).toHaveLength(6);
  });
});

describe("schedules set by a hostile model", () => {
  it("cannot turn reminders into a schedule faster than once a minute", async () => {
    const me = await env.agent({ tools: ["tool::schedule_reminder"] });
    await freshMinute();
    for (let i = 0; i < 10; i++)
      await env.tool("tool::schedule_reminder", { message: `r${i}`, inSeconds: 3600 });
    const refused = await env.failure("tool::schedule_reminder", { message: "one more", inSeconds: 3600 });
    expect(refused).toMatchObject({
      status: 429,
      message: expect.stringContaining("10 reminders this minute"),
    });
    // Another agent's quota is its own, and a key of another realm cannot spend this agent's.
    const other = await env.agent({ tools: ["tool::schedule_reminder"] });
    await env.tool("tool::schedule_reminder", { message: "mine", inSeconds: 60 }, other);
    const stranger = await env.failure(
      "tool::schedule_reminder",
      { agentId: me.agentId, message: "x", inSeconds: 60 },
      other,
    );
    expect(stranger.status).toBe(404);
  });

  it("cannot pass its cap of scheduled jobs by asking for many at once", async () => {
    await env.agent({ tools: ["tool::cron_create", "tool::cron_list"] });
    const results = await Promise.allSettled(
      Array.from({ length: 120 }, (_, i) =>
        env.tool("tool::cron_create", { schedule: "0 0 1 1 *", message: `job ${i}` }),
      ),
    );
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(100);
    const refusals = results.flatMap((result) => (result.status === "rejected" ? [result.reason] : []));
    expect(refusals[0]).toMatchObject({
      status: 400,
      message: expect.stringContaining("100 scheduled jobs"),
    });
    const { jobs } = await env.tool<{ jobs: unknown[] }>("tool::cron_list", {});
    expect(jobs).toHaveLength(100);
  });
});

describe("oversized messages between agents", () => {
  it("answers a delegation too long for a message with a 400 that says so", async () => {
    const me = await env.agent({ tools: ["tool::agent_delegate"] });
    const peer = await createAgent(env.server, me.realmId, { name: "peer" });
    const refused = await env.failure("tool::agent_delegate", {
      to: peer,
      task: "t".repeat(100_000),
      context: "c".repeat(100_000),
    });
    expect(refused).toMatchObject({
      status: 400,
      message: expect.stringContaining("message must be at most 200000 characters"),
    });
  });
});

describe("fan-out from one agent", () => {
  it("wakes at most 30 agents' turns a minute, however many agents it names", async () => {
    const sender = await env.agent({ tools: ["tool::agent_send"] });
    const peers = [];
    for (let i = 0; i < 31; i++) peers.push(await createAgent(env.server, sender.realmId, { name: `p${i}` }));
    await freshMinute();
    for (const peer of peers.slice(0, 30)) await env.tool("tool::agent_send", { to: peer, message: "wake" });
    const refused = await env.failure("tool::agent_send", { to: peers[30], message: "wake" });
    expect(refused).toMatchObject({
      status: 429,
      message: expect.stringContaining("30 messages to other agents"),
    });
  });
});

describe("a sub-agent's rights", () => {
  it("gets no tool its parent was not given, even where the parent's capabilities are broader", async () => {
    const parent = await env.agent({ tools: ["tool::agent_spawn"], capabilities: ["*"] });
    const { agentId: child } = await env.tool<{ agentId: string }>("tool::agent_spawn", {
      name: "shell-holder",
      toolProfile: "code",
    });
    const { body } = await call(env.server, "GET", `/api/agents/${child}`);
    expect(body.resolvedTools).toEqual([]);
    expect(body.capabilities).toEqual(["tool::agent_spawn"]);
    // A grandchild given the whole profile has what its parent has, and no more.
    const { agentId: grandchild } = await env.tool<{ agentId: string }>(
      "tool::agent_spawn",
      { name: "deeper", toolProfile: "full" },
      { agentId: child, realmId: parent.realmId },
    );
    const deeper = await call(env.server, "GET", `/api/agents/${grandchild}`);
    expect(deeper.body.resolvedTools).toEqual([]);
    // Patterns its capabilities cover pass on as patterns; others as the functions they allow.
    const narrow = await env.agent({
      tools: ["tool::agent_spawn", "tool::file_*"],
      capabilities: ["tool::agent_*", "tool::file_read"],
    });
    const { agentId: reader } = await env.tool<{ agentId: string }>(
      "tool::agent_spawn",
      { name: "reader", toolProfile: "full" },
      narrow,
    );
    const readerRecord = await call(env.server, "GET", `/api/agents/${reader}`);
    expect(readerRecord.body.capabilities).toEqual(["tool::agent_spawn", "tool::file_read"]);
    expect(readerRecord.body.resolvedTools).toEqual(["tool::agent_spawn", "tool::file_read"]);
  });
});

describe("jobs of an agent deleted meanwhile", () => {
  it("leaves no job behind when the agent is deleted while it schedules one", async () => {
    const me = await env.agent({ tools: ["tool::cron_create"] });
    // Holds the job's creation after its agent was checked, until the agent's delete has purged.
    let release = () => {};
    const held = serialized(
      `tool_job_create\u0000${me.agentId}`,
      () => new Promise<void>((resolve) => (release = resolve)),
    );
    const created = env.tool("tool::cron_create", { schedule: "* * * * *", message: "outlive you" });
    created.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await call(env.server, "DELETE", `/api/agents/${me.agentId}`)).status).toBe(204);
    release();
    await held;
    await expect(created).rejects.toMatchObject({ status: 404 });
    const { items } = (await env.server.service.engine.trigger({
      function_id: "state::list",
      payload: { scope: jobsScope(me.realmId) },
    })) as { items: unknown[] };
    expect(items).toEqual([]);
  });
});
