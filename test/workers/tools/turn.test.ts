import { describe, expect, it } from "vitest";
import { agentPrincipal } from "../../../src/engine/acting-agent.ts";
import { call, createAgent, newRealm, realmKey } from "../../helpers/control-plane.ts";
import { toolsServer } from "./setup.ts";

const env = toolsServer();

async function pendingApproval(
  agentId: string,
): Promise<{ callId: string; functionId: string; input: Record<string, unknown> }> {
  for (let i = 0; i < 100; i++) {
    const { body } = await call(env.server, "GET", `/api/agents/${agentId}/approvals?status=pending`);
    if (body.approvals?.length) return body.approvals[0];
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("no pending approval");
}

describe("tools in an agent's turn", () => {
  it("gives the full profile more than 60 tools, shown as the agent's resolved tools", async () => {
    const realmId = await newRealm(env.server);
    const agentId = await createAgent(env.server, realmId, { toolProfile: "full" });
    const { body } = await call(env.server, "GET", `/api/agents/${agentId}`);
    expect(body.resolvedTools.length).toBeGreaterThan(60);
    expect(body.resolvedTools).toEqual(
      expect.arrayContaining([
        "tool::shell_exec",
        "tool::browser_screenshot",
        "tool::apply_patch",
        "memory::recall",
      ]),
    );
    const chat = await createAgent(env.server, realmId, { toolProfile: "chat" });
    expect((await call(env.server, "GET", `/api/agents/${chat}`)).body.resolvedTools).toEqual([
      "memory::recall",
      "memory::store",
      "tool::web_fetch",
      "tool::web_search",
    ]);
    const code = await createAgent(env.server, realmId, { toolProfile: "code" });
    expect((await call(env.server, "GET", `/api/agents/${code}`)).body.resolvedTools).toEqual([
      "tool::apply_patch",
      "tool::code_analyze",
      "tool::code_explain",
      "tool::code_format",
      "tool::code_lint",
      "tool::code_test",
      "tool::file_list",
      "tool::file_read",
      "tool::file_write",
      "tool::shell_exec",
    ]);
  });

  it("edits files and runs a program in its own workspace when the model calls the tools", async () => {
    const realmId = await newRealm(env.server);
    const agentId = await createAgent(env.server, realmId, { toolProfile: "code" });
    env.fake.reply(
      {
        toolCalls: [
          { name: "tool__file_write", arguments: { path: "hello.js", content: "console.log(6 * 7)" } },
        ],
      },
      { toolCalls: [{ name: "tool__shell_exec", arguments: { command: "node", args: ["hello.js"] } }] },
      { content: "It printed 42." },
    );
    const reply = await call(env.server, "POST", `/api/agents/${agentId}/message`, { message: "run it" });
    expect(reply.body.content).toBe("It printed 42.");
    expect(JSON.stringify(env.fake.requests.at(-1))).toContain('\\"stdout\\":\\"42\\\\n\\"');
  });

  it("waits for an admin's approval of a risky call, then runs it", async () => {
    const realmId = await newRealm(env.server);
    const agentId = await createAgent(env.server, realmId, {
      toolProfile: "code",
      toolPolicies: { "tool::shell_exec": { approval: "required" } },
    });
    env.fake.reply(
      { toolCalls: [{ name: "tool__shell_exec", arguments: { command: "echo", args: ["approved run"] } }] },
      { content: "done" },
    );
    const turn = call(env.server, "POST", `/api/agents/${agentId}/message`, { message: "echo something" });
    const pending = await pendingApproval(agentId);
    expect(pending).toMatchObject({
      functionId: "tool::shell_exec",
      input: { command: "echo", args: ["approved run"] },
    });
    // An admin can decide, once.
    expect(
      (
        await call(env.server, "POST", `/api/agents/${agentId}/approvals/${pending.callId}`, {
          approve: true,
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await call(env.server, "POST", `/api/agents/${agentId}/approvals/${pending.callId}`, {
          approve: false,
        })
      ).status,
    ).toBe(409);
    expect((await turn).body.content).toBe("done");
    expect(JSON.stringify(env.fake.requests.at(-1))).toContain("approved run");
  });

  it("holds an agent's calls of a function outside tool:: (an integration's, a worker's) to its approval policy", async () => {
    let runs = 0;
    env.server.service.engine.worker("policy-test").registerFunction({ id: "gated::act" }, () => {
      runs++;
      return { acted: true };
    });
    const realmId = await newRealm(env.server);
    const agentId = await createAgent(env.server, realmId, {
      tools: ["gated::act"],
      toolPolicies: { "gated::*": { approval: "required" } },
    });
    env.fake.reply(
      { toolCalls: [{ name: "gated__act", arguments: { what: "denied call" } }] },
      { content: "refused" },
      { toolCalls: [{ name: "gated__act", arguments: { what: "approved call" } }] },
      { content: "acted" },
    );
    const denied = call(env.server, "POST", `/api/agents/${agentId}/message`, { message: "act" });
    const first = await pendingApproval(agentId);
    expect(first).toMatchObject({ functionId: "gated::act", input: { what: "denied call" } });
    await call(env.server, "POST", `/api/agents/${agentId}/approvals/${first.callId}`, { approve: false });
    expect((await denied).body.content).toBe("refused");
    expect(runs).toBe(0);

    const approved = call(env.server, "POST", `/api/agents/${agentId}/message`, { message: "act" });
    const second = await pendingApproval(agentId);
    await call(env.server, "POST", `/api/agents/${agentId}/approvals/${second.callId}`, { approve: true });
    expect((await approved).body.content).toBe("acted");
    expect(runs).toBe(1);
  });

  it("lets a key of the agent's realm decide its call; another realm's key gets 404, the agent itself 403", async () => {
    const realmId = await newRealm(env.server);
    const agentId = await createAgent(env.server, realmId, {
      toolProfile: "code",
      toolPolicies: { "tool::shell_exec": { approval: "required" } },
    });
    env.fake.reply(
      {
        toolCalls: [{ name: "tool__shell_exec", arguments: { command: "echo", args: ["tenant said yes"] } }],
      },
      { content: "done by the tenant" },
    );
    const turn = call(env.server, "POST", `/api/agents/${agentId}/message`, { message: "echo" });
    const pending = await pendingApproval(agentId);
    const decide = (key: string) =>
      call(env.server, "POST", `/api/agents/${agentId}/approvals/${pending.callId}`, { approve: true }, key);

    const stranger = await decide(await realmKey(env.server, await newRealm(env.server)));
    expect(stranger.status, JSON.stringify(stranger.body)).toBe(404);
    const itself = env.server.service.engine.trigger({
      function_id: "tools::decide",
      payload: { id: agentId, callId: pending.callId, approve: true },
      auth: agentPrincipal({ id: agentId, realmId }),
    });
    await expect(itself).rejects.toMatchObject({ status: 403 });

    const tenantKey = await realmKey(env.server, realmId);
    const decided = await decide(tenantKey);
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    expect(decided.body).toMatchObject({ status: "approved", decidedBy: expect.stringMatching(/^realm:/) });
    expect((await turn).body.content).toBe("done by the tenant");
    expect(JSON.stringify(env.fake.requests.at(-1))).toContain("tenant said yes");
  });

  it("returns a denied call to the model as an error, and runs safe calls without asking", async () => {
    const realmId = await newRealm(env.server);
    const agentId = await createAgent(env.server, realmId, {
      toolProfile: "code",
      toolPolicies: { "tool::*": { approval: "required" } },
    });
    env.fake.reply(
      { toolCalls: [{ name: "tool__file_list", arguments: {} }] },
      { toolCalls: [{ name: "tool__file_write", arguments: { path: "x.txt", content: "x" } }] },
      { content: "could not write" },
    );
    const turn = call(env.server, "POST", `/api/agents/${agentId}/message`, { message: "write" });
    const pending = await pendingApproval(agentId);
    expect(pending.functionId).toBe("tool::file_write");
    await call(env.server, "POST", `/api/agents/${agentId}/approvals/${pending.callId}`, {
      approve: false,
      reason: "not now",
    });
    expect((await turn).body.content).toBe("could not write");
    expect(JSON.stringify(env.fake.requests.at(-1))).toContain("was denied by admin");
    const { body } = await call(env.server, "GET", `/api/agents/${agentId}/approvals`);
    expect(body.approvals).toMatchObject([{ status: "denied", reason: "not now" }]);
  });

  it("runs a workflow's tool steps as the run's agent: in its workspace, under its tool policies", async () => {
    const realmId = await newRealm(env.server);
    const agentId = await createAgent(env.server, realmId, {
      toolProfile: "code",
      toolPolicies: { "tool::file_write": { approval: "required" } },
    });
    const created = await call(env.server, "POST", "/api/workflows", {
      name: "save note",
      realmId,
      steps: [
        { name: "write", functionId: "tool::file_write", args: { path: "note.txt", content: "{{input}}" } },
        { name: "read", functionId: "tool::file_read", args: { path: "note.txt" } },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const run = call(env.server, "POST", "/api/workflows/run", {
      workflowId: created.body.id,
      realmId,
      input: "from a workflow",
      agentId,
    });
    const pending = await pendingApproval(agentId);
    expect(pending).toMatchObject({
      functionId: "tool::file_write",
      input: { path: "note.txt", content: "from a workflow" },
    });
    await call(env.server, "POST", `/api/agents/${agentId}/approvals/${pending.callId}`, { approve: true });
    const finished = await run;
    expect(finished.body).toMatchObject({ status: "completed" });
    expect(JSON.stringify(finished.body)).toContain('"content":"from a workflow"');
  });

  it("lets the realm's council decide a risky call by vote where the realm has one", async () => {
    const realmId = await newRealm(env.server);
    const member = await createAgent(env.server, realmId, { name: "council member" });
    expect(
      (
        await call(env.server, "POST", "/api/hierarchy", {
          realmId,
          agentId: member,
          capabilities: ["council"],
        })
      ).status,
    ).toBeLessThan(300);
    const agentId = await createAgent(env.server, realmId, {
      toolProfile: "code",
      toolPolicies: { "tool::shell_exec": { approval: "required" } },
    });
    env.fake.reply(
      { toolCalls: [{ name: "tool__shell_exec", arguments: { command: "echo", args: ["by vote"] } }] },
      { content: "voted through" },
    );
    const turn = call(env.server, "POST", `/api/agents/${agentId}/message`, { message: "echo" });
    const pending = (await pendingApproval(agentId)) as { proposalId?: string };
    expect(pending.proposalId).toMatch(/^prp-/);
    // More newer proposals than a page holds: the waiting call still finds its own.
    for (let i = 0; i < 201; i++) {
      const other = await call(env.server, "POST", "/api/council/proposals", {
        realmId,
        kind: "custom",
        title: `other ${i}`,
        requestedBy: member,
      });
      expect(other.status).toBe(201);
    }
    const vote = await call(
      env.server,
      "POST",
      `/api/council/proposals/${realmId}/${pending.proposalId}/vote`,
      { voterId: member, vote: "for" },
    );
    expect(vote.status, JSON.stringify(vote.body)).toBe(200);
    expect((await turn).body.content).toBe("voted through");
    const { body } = await call(env.server, "GET", `/api/agents/${agentId}/approvals`);
    expect(body.approvals).toMatchObject([
      { status: "approved", decidedBy: `council:${pending.proposalId}` },
    ]);
    expect(JSON.stringify(env.fake.requests.at(-1))).toContain("by vote");
  });

  it("withdraws the call's council proposal when a key decides first, naming who did", async () => {
    const realmId = await newRealm(env.server);
    const member = await createAgent(env.server, realmId, { name: "council member" });
    await call(env.server, "POST", "/api/hierarchy", { realmId, agentId: member, capabilities: ["council"] });
    const agentId = await createAgent(env.server, realmId, {
      toolProfile: "code",
      toolPolicies: { "tool::shell_exec": { approval: "required" } },
    });
    env.fake.reply(
      { toolCalls: [{ name: "tool__shell_exec", arguments: { command: "echo", args: ["by key"] } }] },
      { content: "decided by a key" },
    );
    const turn = call(env.server, "POST", `/api/agents/${agentId}/message`, { message: "echo" });
    const pending = (await pendingApproval(agentId)) as { callId: string; proposalId?: string };
    const key = await realmKey(env.server, realmId);
    const decided = await call(
      env.server,
      "POST",
      `/api/agents/${agentId}/approvals/${pending.callId}`,
      { approve: true, reason: "looks fine" },
      key,
    );
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    expect((await turn).body.content).toBe("decided by a key");
    const proposal = await call(env.server, "GET", `/api/council/proposals/${realmId}/${pending.proposalId}`);
    expect(proposal.body).toMatchObject({ status: "cancelled" });
    expect(proposal.body.reason).toMatch(
      new RegExp(`^tool call ${pending.callId} was approved by realm:.+: looks fine$`),
    );
    const vote = await call(
      env.server,
      "POST",
      `/api/council/proposals/${realmId}/${pending.proposalId}/vote`,
      { voterId: member, vote: "against" },
    );
    expect(vote.status).toBe(409);
  });
});
