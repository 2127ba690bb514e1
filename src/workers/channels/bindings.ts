import type { StateClient } from "../../engine/state/client.ts";
import type { InvocationContext, TriggerFn } from "../../engine/types.ts";
import { assertRealmAccess, realmFilter } from "../../shared/access.ts";
import { nowIso } from "../../shared/clock.ts";
import { notFound } from "../../shared/errors.ts";
import { oldestFirst, pageOf } from "../../shared/pagination.ts";
import { BINDINGS_SCOPE, type Binding, bindingKey } from "./schema.ts";

/** The agent as the caller sees it: another realm's agent is refused by the agents worker. */
async function agentRealm(trigger: TriggerFn, agentId: string): Promise<string> {
  const agent = (await trigger({ function_id: "agent::get", payload: { id: agentId } })) as {
    realmId?: string;
    status?: string;
  };
  if (!agent?.realmId || agent.status === "deleting") throw notFound(`Agent ${agentId} not found`);
  return agent.realmId;
}

export async function bind(
  state: StateClient,
  trigger: TriggerFn,
  input: { platform: string; channelId: string; agentId: string },
): Promise<Binding> {
  const realmId = await agentRealm(trigger, input.agentId);
  const existing = await state.get<Binding>(BINDINGS_SCOPE, bindingKey(input.platform, input.channelId));
  // Rebinding another realm's channel would take its conversations: it reads as not found.
  if (existing && existing.realmId !== realmId) await agentRealm(trigger, existing.agentId);
  const binding: Binding = { ...input, realmId, createdAt: nowIso() };
  await state.set(BINDINGS_SCOPE, bindingKey(input.platform, input.channelId), binding);
  return binding;
}

export async function listBindings(
  state: StateClient,
  ctx: InvocationContext,
  input: { realmId?: string; platform?: string; limit: number; cursor?: string },
) {
  if (input.realmId !== undefined) assertRealmAccess(ctx, input.realmId);
  const visible = realmFilter(ctx);
  const all: Binding[] = [];
  for await (const { value } of state.scan<Binding>(BINDINGS_SCOPE)) {
    if (visible && value.realmId !== visible) continue;
    if (input.realmId && value.realmId !== input.realmId) continue;
    if (input.platform && value.platform !== input.platform) continue;
    all.push(value);
  }
  const page = pageOf(
    all,
    (binding) => oldestFirst(binding.createdAt, bindingKey(binding.platform, binding.channelId)),
    input,
  );
  return { bindings: page.items, nextCursor: page.nextCursor };
}

export async function unbind(
  state: StateClient,
  ctx: InvocationContext,
  input: { platform: string; channelId: string },
) {
  const key = bindingKey(input.platform, input.channelId);
  const existing = await state.get<Binding>(BINDINGS_SCOPE, key);
  const visible = realmFilter(ctx);
  if (!existing || (visible && existing.realmId !== visible)) throw notFound(`No binding of ${key}`);
  await state.delete(BINDINGS_SCOPE, key);
  return undefined;
}
