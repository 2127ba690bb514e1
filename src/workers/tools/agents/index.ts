import { AsyncLocalStorage } from "node:async_hooks";
import { z } from "zod";
import { call } from "../../../engine/call.ts";
import { casUpdate } from "../../../engine/state/cas.ts";
import { stateClient } from "../../../engine/state/client.ts";
import { systemCall } from "../../../engine/system-call.ts";
import { badRequest, forbidden, isFunctionNotFound } from "../../../shared/errors.ts";
import { matchesPattern } from "../../../shared/function-pattern.ts";
import { agentIdField } from "../fields.ts";
import { countPerMinute } from "../rate.ts";
import { defineTool, type ToolAgent, type ToolContext } from "../tool.ts";
import { snapshotTools } from "./snapshots.ts";
import { agentLive, assertRootLive, rootGone, treeRootOf } from "./tree.ts";

/**
 * How deep sub-agents may nest, and how many one agent's whole tree of them may hold: counted for the
 * tree's root, since 20 per agent at three levels would let one agent's model create 8 420 agents.
 */
export const MAX_SPAWN_DEPTH = 3;
export const MAX_SPAWNS = 20;
/** Messages one agent may send to another per minute (counted in state, so on every node). */
export const MAX_SENDS_PER_MINUTE = 10;
/**
 * Messages one agent may send per minute to all others together: each starts a turn that may send on,
 * so counted per target alone, one agent's model woke every agent of its realm ten times a minute.
 */
export const MAX_SENDS_PER_MINUTE_IN_ALL = 30;
/**
 * Chat messages one agent may send per minute: a channel message (a chat user, a fetched page) could
 * otherwise steer its model to flood the channel's people, through the operator's platform token.
 */
export const MAX_CHANNEL_SENDS_PER_MINUTE = 20;
export const spawnsScope = "tool_spawns";
export const channelSendsScope = "tool_channel_sends";
export const sendsScope = "tool_agent_sends";

/**
 * How many agent turns one message may nest through agents messaging agents (send, delegate, a spawn's
 * first message): A asks B, whose turn asks C, … Each level holds a turn open while the next runs, and
 * each turn may ask several agents at once, so without a bound a loop (A → B → A) or a fan-out ran as
 * deep and as wide as the per-pair send rate allowed.
 */
export const MAX_AGENT_HOPS = 5;
/** The hops of the agent-to-agent call under way (a turn's tool calls run in its async context). */
const hops = new AsyncLocalStorage<number>();

async function chat(ctx: ToolContext, to: string, message: string, sessionId: string) {
  const depth = (hops.getStore() ?? 0) + 1;
  if (depth > MAX_AGENT_HOPS)
    throw forbidden(
      `This conversation already passes through ${MAX_AGENT_HOPS} agents, each asking the next: answer with what you have instead of asking another agent`,
    );
  return hops.run(depth, () => call(ctx.trigger, "agent::chat", { agentId: to, message, sessionId }));
}

/**
 * Per sender and minute, at most MAX_SENDS_PER_MINUTE_IN_ALL (a fan-out stops), and per target at most
 * MAX_SENDS_PER_MINUTE (a loop between two agents stops).
 */
async function countSend(ctx: ToolContext, from: string, to: string): Promise<void> {
  await countPerMinute(
    ctx.trigger,
    sendsScope,
    from,
    MAX_SENDS_PER_MINUTE_IN_ALL,
    `You sent ${MAX_SENDS_PER_MINUTE_IN_ALL} messages to other agents this minute: wait before sending more`,
  );
  await countPerMinute(
    ctx.trigger,
    sendsScope,
    `${from}\u0001${to}`,
    MAX_SENDS_PER_MINUTE,
    `You sent ${to} ${MAX_SENDS_PER_MINUTE} messages this minute: wait before sending more`,
  );
}

/**
 * What an agent may call through its tools, as patterns for a sub-agent's capabilities: without
 * capabilities, its tools plus memory::* (DESIGN §5); with them, each tool pattern its capabilities
 * cover, else the functions of that pattern they allow (its resolved tools). Its capabilities alone
 * gave a sub-agent every tool they match where the parent was given a few (`*` and one tool, say).
 */
function rightsOf(agent: ToolAgent): string[] {
  const { capabilities } = agent;
  if (!capabilities) return [...agent.tools, "memory::*"];
  // A capability matching the pattern's own text matches every id the pattern does: a `*` of the
  // pattern can only fall within a `*` of the capability.
  const covered = (pattern: string) => capabilities.some((capability) => matchesPattern(capability, pattern));
  const rights = agent.tools.flatMap((pattern) =>
    covered(pattern) ? [pattern] : agent.resolvedTools.filter((id) => matchesPattern(pattern, id)),
  );
  return [...new Set(rights)];
}

const agentList = defineTool({
  id: "tool::agent_list",
  actsFor: "agent",
  description: "The agents of your realm: {agents: [{id, name, status, model}]}.",
  input: z.strictObject({ agentId: agentIdField }),
  async run({ agentId }, ctx) {
    const me = await ctx.agent(agentId);
    const { agents } = await call(ctx.trigger, "agent::list", { realmId: me.realmId, limit: 200 });
    return {
      agents: agents.map(({ id, name, status, model }) => ({ id, name, status, model, you: id === agentId })),
    };
  },
});

/**
 * A root deleted while its sub-agent was being created (checked after the create, since the delete
 * marks the root before purging it): the new agent would belong to no tree, so it is deleted again.
 */
async function takeBackIfRootGone(ctx: ToolContext, root: string, created: string): Promise<void> {
  if (await agentLive(ctx, root)) return;
  // As the system: this call created it in its own realm, and an agent may not purge another's memory.
  await systemCall(ctx.trigger, "agent::delete", { id: created });
  throw rootGone(root, "spawn sub-agents");
}

const agentSpawn = defineTool({
  id: "tool::agent_spawn",
  actsFor: "agent",
  description: `Create a sub-agent in your realm (at most ${MAX_SPAWNS} under you and your sub-agents together, nested at most ${MAX_SPAWN_DEPTH} deep) that can do no more than you can, optionally give it a first message: {agentId, response}.`,
  input: z.strictObject({
    agentId: agentIdField,
    name: z.string().trim().min(1).max(200),
    systemPrompt: z.string().max(32_768).optional(),
    model: z.string().min(1).max(256).optional(),
    toolProfile: z.enum(["chat", "code", "research", "ops", "data", "full"]).optional(),
    message: z.string().max(100_000).optional().describe("A first message; its answer is returned"),
  }),
  risky: true,
  async run({ agentId, name, systemPrompt, model, toolProfile, message }, ctx) {
    const parent = await ctx.agent(agentId);
    const depth = Number(parent.metadata?.spawnDepth ?? 0) + 1;
    if (depth > MAX_SPAWN_DEPTH) throw forbidden(`Sub-agents nest at most ${MAX_SPAWN_DEPTH} deep`);
    const root = treeRootOf(parent);
    await assertRootLive(ctx, parent, "spawn sub-agents");
    await casUpdate<{ count: number }>(stateClient(ctx.trigger), spawnsScope, root, ({ value }) => {
      if ((value?.count ?? 0) >= MAX_SPAWNS)
        throw forbidden(
          `${root === agentId ? "You and your sub-agents have" : `Agent ${root}'s sub-agents (you among them) have`} created ${MAX_SPAWNS} sub-agents, the most one agent's tree may hold`,
        );
      return { count: (value?.count ?? 0) + 1 };
    });
    const created = call(ctx.trigger, "agent::create", {
      name,
      realmId: parent.realmId,
      model: model ?? parent.model,
      ...(systemPrompt ? { systemPrompt } : {}),
      ...(toolProfile ? { toolProfile } : {}),
      // The child may call nothing its parent could not, nor without the approvals its parent waits for.
      capabilities: rightsOf(parent),
      ...(parent.toolPolicies ? { toolPolicies: parent.toolPolicies } : {}),
      metadata: { spawnedBy: agentId, spawnDepth: depth, spawnRoot: root },
    });
    const { id } = await created.catch(async (error) => {
      // Not created: the spawn does not count against the quota.
      await casUpdate<{ count: number }>(stateClient(ctx.trigger), spawnsScope, root, ({ value }) => ({
        count: Math.max(0, (value?.count ?? 1) - 1),
      }));
      throw error;
    });
    await takeBackIfRootGone(ctx, root, id);
    const response = message ? (await chat(ctx, id, message, `agent:${agentId}`)).content : null;
    return { agentId: id, depth, response };
  },
});

const agentSend = defineTool({
  id: "tool::agent_send",
  actsFor: "agent",
  description: `Send a message to another agent of your realm and get its answer: {response}. At most ${MAX_SENDS_PER_MINUTE} per target and minute.`,
  input: z.strictObject({
    agentId: agentIdField,
    to: z.string().min(1).max(256),
    message: z.string().min(1).max(100_000),
  }),
  risky: true,
  async run({ agentId, to, message }, ctx) {
    if (to === agentId) throw badRequest("You cannot send a message to yourself");
    await assertRootLive(ctx, await ctx.agent(agentId), "send messages to agents");
    await ctx.agent(to);
    await countSend(ctx, agentId, to);
    const reply = await chat(ctx, to, `Message from agent ${agentId}:\n${message}`, `agent:${agentId}`);
    return { response: reply.content, sessionId: reply.sessionId };
  },
});

const agentDelegate = defineTool({
  id: "tool::agent_delegate",
  actsFor: "agent",
  description:
    "Hand a task (with optional context) to another agent of your realm and get its result: {result}.",
  input: z.strictObject({
    agentId: agentIdField,
    to: z.string().min(1).max(256),
    task: z.string().min(1).max(100_000),
    context: z.string().max(100_000).optional(),
  }),
  risky: true,
  async run({ agentId, to, task, context }, ctx) {
    if (to === agentId) throw badRequest("You cannot delegate to yourself");
    await assertRootLive(ctx, await ctx.agent(agentId), "delegate tasks to agents");
    await ctx.agent(to);
    await countSend(ctx, agentId, to);
    const message = `Task delegated by agent ${agentId}:\n${task}${context ? `\n\nContext:\n${context}` : ""}`;
    const reply = await chat(ctx, to, message, `delegation:${agentId}`);
    return { result: reply.content };
  },
});

const channelSend = defineTool({
  id: "tool::channel_send",
  actsFor: "agent",
  description: `Send a message to a chat channel bound to you, named <platform>:<channel> (e.g. slack:C0123): {queued}; it is delivered through the platform with retries. At most ${MAX_CHANNEL_SENDS_PER_MINUTE} a minute.`,
  input: z.strictObject({
    agentId: agentIdField,
    channel: z.string().min(1).max(256),
    message: z.string().min(1).max(40_000),
  }),
  risky: true,
  async run({ agentId, channel, message }, ctx) {
    await ctx.agent(agentId);
    await countPerMinute(
      ctx.trigger,
      channelSendsScope,
      agentId,
      MAX_CHANNEL_SENDS_PER_MINUTE,
      `You sent ${MAX_CHANNEL_SENDS_PER_MINUTE} chat messages this minute: wait before sending more`,
    );
    try {
      return await ctx.trigger({
        function_id: "channel::send",
        payload: { channelId: channel, text: message, agentId },
      });
    } catch (error) {
      if (isFunctionNotFound(error))
        throw badRequest("No channel worker runs in this service: channels cannot be sent to");
      throw error;
    }
  },
});

export const agentTools = [agentList, agentSpawn, agentSend, agentDelegate, channelSend, ...snapshotTools];
