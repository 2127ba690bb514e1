import { z } from "zod";
import { ACTS_FOR_AGENT, actingAgentOf } from "../../engine/acting-agent.ts";
import { stateClient } from "../../engine/state/client.ts";
import type { InvocationContext } from "../../engine/types.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { assertRealmAccess, isPrivileged, principalLabel, requireAdmin } from "../../shared/access.ts";
import { forbidden, unauthorized } from "../../shared/errors.ts";
import { systemResolver } from "../../shared/net/guarded-request.ts";
import { Sandbox, type SandboxStatus } from "../../shared/process/sandbox/index.ts";
import {
  APPROVAL_STATUSES,
  type Approval,
  approvalList,
  approvalRecord,
  approvalsScope,
  awaitApproval,
  settle,
} from "./approvals.ts";
import { ALL_TOOLS } from "./catalog.ts";
import { agentOf, type ToolsDeps, toolContext } from "./context.ts";
import { matchesPolicy } from "./policy.ts";
import { purgeAgent, purgeRealm } from "./purge.ts";
import { jobRecord, scheduleWorkflow } from "./schedule/store.ts";
import { sweepDue } from "./schedule/sweep.ts";
import type { Tool } from "./tool.ts";

export interface ToolsOptions {
  env: NodeJS.ProcessEnv;
  dataDir: string;
  /** Tests only (AGENTOS_ALLOW_PRIVATE_NETWORK=1): network tools may reach loopback and private addresses. */
  allowPrivateNetwork?: boolean;
  /** Tests only (AGENTOS_ALLOWED_ADDRESSES): exact addresses exempt from the SSRF rule. */
  allowedAddresses?: readonly string[];
  /** False for a process that does no background work (a CLI command): no job sweep is scheduled. */
  background?: boolean;
  warn?: (message: string) => void;
  onShutdown?: (hook: () => Promise<void>) => void;
}

const idField = z.string().min(1).max(256);

/** Every agent tool (files, shell, code, data, git, system, scheduling, knowledge, agents, web, browser). */
export function registerTools(worker: WorkerClient, options: ToolsOptions): void {
  const trigger = worker.trigger.bind(worker);
  const policy = {
    allowPrivateNetwork: options.allowPrivateNetwork ?? false,
    allowedAddresses: new Set(options.allowedAddresses ?? []),
    resolve: systemResolver,
  };
  const sandbox = new Sandbox({ env: options.env, dataDir: options.dataDir, policy });
  const deps: ToolsDeps = {
    trigger,
    state: stateClient(trigger),
    env: options.env,
    dataDir: options.dataDir,
    policy,
    sandbox,
  };
  options.onShutdown?.(() => sandbox.close());
  // The serving process probes at start, so an operator learns at once that agents cannot run programs.
  if (options.background !== false)
    void sandbox.ready().then((status) => reportSandbox(status, options.warn));
  for (const tool of ALL_TOOLS) {
    worker.registerFunction(
      {
        id: tool.id,
        description: tool.description,
        input: tool.input,
        ...(tool.output ? { output: tool.output } : {}),
        ...(tool.actsFor === "agent" ? { metadata: ACTS_FOR_AGENT } : {}),
      },
      async (input, call) => {
        await approvalGate(deps, tool, input, call);
        return tool.run(input, toolContext(deps, call));
      },
    );
  }

  worker.registerFunction(
    {
      id: "tools::approvals",
      description: "An agent's tool calls that wait for approval (or were decided): {approvals}",
      input: z.strictObject({
        id: idField,
        status: z.enum(APPROVAL_STATUSES).optional(),
      }),
      output: approvalList,
    },
    async ({ id, status }) => {
      await agentOf(trigger, id);
      const approvals: Approval[] = [];
      for await (const { value } of deps.state.scan<Approval>(approvalsScope(id))) {
        if (!status || value.status === status) approvals.push(value);
      }
      return { approvals: approvals.sort((a, b) => a.createdAt.localeCompare(b.createdAt)) };
    },
  );
  worker.registerFunction(
    {
      id: "tools::decide",
      description:
        "Approve or deny an agent's pending tool call (admin, or a key of the agent's realm; never an agent): the waiting turn goes on",
      input: z.strictObject({
        id: idField,
        callId: idField,
        approve: z.boolean({ error: "approve must be true or false" }),
        reason: z.string().max(2000).optional(),
      }),
      output: approvalRecord,
    },
    async ({ id, callId, approve, reason }, ctx) => {
      await mayDecide(trigger, ctx, id);
      return settle(deps.state, id, callId, {
        status: approve ? "approved" : "denied",
        reason,
        decidedBy: principalLabel(ctx.auth),
      });
    },
  );
  worker.registerFunction(
    {
      id: "tools::approval_gate",
      description:
        "Before an agent's own call of a function outside tool:: (an MCP or HTTP integration's, a remote worker's, mission::…): waits for a decision when the agent's toolPolicies require approval for it; {required}",
      input: z.strictObject({ functionId: z.string().min(1).max(512), input: z.unknown() }),
      output: z.object({ required: z.boolean() }),
    },
    ({ functionId, input }, call) => policyGate(deps, functionId, input, call),
  );
  worker.registerRoute("tools::approvals", "GET", "/api/agents/:id/approvals");
  worker.registerRoute("tools::decide", "POST", "/api/agents/:id/approvals/:callId");

  worker.registerFunction(
    {
      id: "tools::purge_agent",
      description: "Delete a deleted agent's workspace, snapshots and tool data (agent delete)",
      input: z.strictObject({ realmId: idField, agentId: idField }),
    },
    async ({ realmId, agentId }, ctx) => {
      requireAdmin(ctx);
      await purgeAgent(deps, realmId, agentId);
      return { agentId };
    },
  );
  worker.registerFunction(
    {
      id: "tools::purge_realm",
      description: "Delete the workspaces and tool data of a realm's agents (realm delete)",
      input: z.strictObject({ realmId: idField }),
    },
    async ({ realmId }, ctx) => {
      requireAdmin(ctx);
      return { purged: await purgeRealm(deps, realmId) };
    },
  );

  worker.registerFunction(
    {
      id: "tools::schedule_workflow",
      description:
        "Schedule a workflow run for an agent at every time of a cron expression (admin; a declared hand that names steps): {job}",
      input: z.strictObject({
        agentId: idField,
        workflowId: idField,
        schedule: z.string().min(1).max(200),
        input: z.string().max(8000).default(""),
        name: z.string().max(200).optional(),
      }),
      output: z.object({ job: jobRecord }),
    },
    async (input, ctx) => {
      requireAdmin(ctx);
      const agent = await agentOf(trigger, input.agentId);
      return { job: await scheduleWorkflow(deps.state, agent.realmId, input) };
    },
  );
  worker.registerFunction(
    {
      id: "tools::sweep",
      description: "Fire the scheduled jobs that are due (cron, internal)",
      input: z.strictObject({}).passthrough(),
    },
    async (_input, ctx) => {
      requireAdmin(ctx);
      return { fired: await sweepDue(deps.state, trigger) };
    },
  );
  if (options.background !== false) {
    worker.registerTrigger({
      type: "cron",
      function_id: "tools::sweep",
      config: { expression: "* * * * * *" },
    });
  }
}

/**
 * Who decides an agent's tool calls: an admin, or a key of the agent's own realm (a tenant governs its
 * agents; another realm's key gets 404, as if the agent were not there). Never an agent acting through
 * its tools (key id `agent:<id>`): an approval exists to hold an agent back, so no agent may grant one,
 * its own or a peer's.
 */
async function mayDecide(trigger: ToolsDeps["trigger"], ctx: InvocationContext, agentId: string) {
  if (ctx.auth.kind === "anonymous") throw unauthorized(`${ctx.functionId} requires an API key`);
  if (actingAgentOf(ctx.auth)) throw forbidden("An agent may not decide tool approvals");
  if (isPrivileged(ctx.auth)) return;
  const agent = await agentOf(trigger, agentId);
  assertRealmAccess(ctx, agent.realmId, `Agent ${agentId} not found`);
}

/** A risky call of an agent that marked the tool `approval: "required"` waits for a decision first. */
async function approvalGate(
  deps: ToolsDeps,
  tool: Tool,
  input: unknown,
  call: InvocationContext,
): Promise<void> {
  const agentId = actingAgentOf(call.auth);
  if (!agentId) return;
  const risky = typeof tool.risky === "function" ? tool.risky(input) : tool.risky === true;
  if (!risky) return;
  const agent = await agentOf(deps.trigger, agentId);
  if (!matchesPolicy(agent.toolPolicies, tool.id, "required")) return;
  await awaitApproval(deps.state, deps.trigger, {
    agentId,
    realmId: agent.realmId,
    functionId: tool.id,
    input,
    signal: call.signal,
  });
}

/**
 * The approval a policy asks of an agent's call outside tool::. Every such call waits: those functions
 * do not say which of their calls change the outside world, as tools do with `risky`.
 */
async function policyGate(
  deps: ToolsDeps,
  functionId: string,
  input: unknown,
  call: InvocationContext,
): Promise<{ required: boolean }> {
  const agentId = actingAgentOf(call.auth);
  if (!agentId) throw forbidden("tools::approval_gate gates an agent's own calls");
  // A tool:: function gates its own risky calls (approvalGate).
  if (functionId.startsWith("tool::")) return { required: false };
  const agent = await agentOf(deps.trigger, agentId);
  if (!matchesPolicy(agent.toolPolicies, functionId, "required")) return { required: false };
  await awaitApproval(deps.state, deps.trigger, {
    agentId,
    realmId: agent.realmId,
    functionId,
    input,
    signal: call.signal,
  });
  return { required: true };
}

function reportSandbox(status: SandboxStatus, warn: ((message: string) => void) | undefined): void {
  const say = warn ?? ((message: string) => console.warn(message));
  if (status.mode === "off") {
    say(
      "SANDBOX OFF (AGENTOS_SANDBOX=off): agents' programs run unconfined, as the service's user, and can read its secrets and data. Unset AGENTOS_SANDBOX to confine them.",
    );
  } else if (status.mode === "unavailable") {
    say(`SANDBOX UNAVAILABLE: tools that run programs are refused until this is fixed: ${status.reason}`);
  }
}
