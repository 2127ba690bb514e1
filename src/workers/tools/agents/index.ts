import { z } from "zod";
import { call } from "../../../engine/call.ts";
import { casUpdate } from "../../../engine/state/cas.ts";
import { stateClient } from "../../../engine/state/client.ts";
import { badRequest, forbidden, isFunctionNotFound } from "../../../shared/errors.ts";
import { agentIdField } from "../fields.ts";
import { defineTool, type ToolContext } from "../tool.ts";
import { snapshotTools } from "./snapshots.ts";

/**
 * How deep sub-agents may nest, and how many one agent's whole tree of them may hold: counted for the
 * tree's root, since 20 per agent at three levels would let one agent's model create 8 420 agents.
 */
export const MAX_SPAWN_DEPTH = 3;
export const MAX_SPAWNS = 20;
/** Messages one agent may send to another per minute (counted in state, so on every node). */
export const MAX_SENDS_PER_MINUTE = 10;
export const spawnsScope = "tool_spawns";
const sendsScope = "tool_agent_sends";

async function chat(ctx: ToolContext, to: string, message: string, sessionId: string) {
  return call(ctx.trigger, "agent::chat", { agentId: to, message, sessionId });
}

/** Per sender → target and minute, at most MAX_SENDS_PER_MINUTE: a loop between two agents stops. */
async function countSend(ctx: ToolContext, from: string, to: string): Promise<void> {
  const minute = new Date().toISOString().slice(0, 16);
  await casUpdate<{ minute: string; count: number }>(
    stateClient(ctx.trigger),
    sendsScope,
    `${from}\u0001${to}`,
    ({ value }) => {
      const count = value?.minute === minute ? value.count : 0;
      if (count >= MAX_SENDS_PER_MINUTE)
        throw badRequest(
          `You sent ${to} ${MAX_SENDS_PER_MINUTE} messages this minute: wait before sending more`,
        );
      return { minute, count: count + 1 };
    },
  );
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
    const root = typeof parent.metadata?.spawnRoot === "string" ? parent.metadata.spawnRoot : agentId;
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
      // The child may call nothing its parent could not.
      capabilities: parent.capabilities ?? [...parent.tools, "memory::*"],
      metadata: { spawnedBy: agentId, spawnDepth: depth, spawnRoot: root },
    });
    const { id } = await created.catch(async (error) => {
      // Not created: the spawn does not count against the quota.
      await casUpdate<{ count: number }>(stateClient(ctx.trigger), spawnsScope, root, ({ value }) => ({
        count: Math.max(0, (value?.count ?? 1) - 1),
      }));
      throw error;
    });
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
    await ctx.agent(agentId);
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
    await ctx.agent(agentId);
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
  description:
    "Send a message to a chat channel bound to you, named <platform>:<channel> (e.g. slack:C0123): {queued}; it is delivered through the platform with retries.",
  input: z.strictObject({
    agentId: agentIdField,
    channel: z.string().min(1).max(256),
    message: z.string().min(1).max(40_000),
  }),
  risky: true,
  async run({ agentId, channel, message }, ctx) {
    await ctx.agent(agentId);
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
