import { z } from "zod";
import type { InvocationContext } from "../../engine/types.ts";
import { nowIso } from "../../shared/clock.ts";
import { badRequest, forbidden, notFound } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { bindingAt } from "./bindings.ts";
import { replyToken } from "./credentials.ts";
import type { ChannelDeps } from "./pipeline.ts";
import { enqueue } from "./queue.ts";
import type { ChannelJob } from "./schema.ts";
import type { Adapter } from "./sender.ts";

export const sendInput = z.strictObject({
  channelId: z.string().min(1).max(600),
  text: z.string().min(1).max(100_000),
  agentId: z.string().min(1).max(256),
});

/**
 * `channel::send`: an agent's message to its bound channel, queued for delivery like a reply. Where it
 * goes is the platform's reply target for the channel; a platform without one only lets bots answer.
 */
export async function sendToChannel(
  deps: ChannelDeps,
  adapters: ReadonlyMap<string, Adapter>,
  { channelId, text, agentId }: z.infer<typeof sendInput>,
  ctx: InvocationContext,
): Promise<{ queued: string }> {
  const [platform = "", ...rest] = channelId.split(":");
  const adapter = adapters.get(platform);
  if (!adapter)
    throw badRequest(
      `channelId must be <platform>:<channel>, with platform one of ${[...adapters.keys()].join(", ")}`,
    );
  const binding = await bindingAt(deps.state, deps.trigger, platform, rest.join(":"));
  if (!binding) throw notFound(`No binding of ${channelId}: bind it with POST /api/channels`);
  if (ctx.auth.kind === "realm" && (ctx.auth.realmId !== binding.realmId || binding.agentId !== agentId)) {
    throw forbidden(`Only the agent bound to ${channelId} may send to it`);
  }
  if (!adapter.replyTarget)
    throw badRequest(`On ${platform} an agent can only answer messages; it cannot start a conversation`);
  const channel = rest.join(":");
  if (adapter.channelToken?.ownForUnprompted) {
    const { names, token } = await replyToken(deps.trigger, adapter, channel, true);
    if (!token) throw badRequest(`${names[0]} is not in the vault: an agent cannot send to ${channelId}`);
  }
  const job: ChannelJob = {
    id: newId("chj"),
    platform,
    realmId: binding.realmId,
    agentId,
    sessionId: `${platform}:${rest.join(":")}`,
    phase: "deliver",
    text: "",
    reply: text,
    delivered: 0,
    replyTo: adapter.replyTarget(channel),
    unprompted: true,
    attempts: 0,
    createdAt: nowIso(),
  };
  await enqueue(deps.state, job);
  deps.kick();
  return { queued: job.id };
}
