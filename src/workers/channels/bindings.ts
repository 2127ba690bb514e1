import { call } from "../../engine/call.ts";
import type { StateClient } from "../../engine/state/client.ts";
import {
  type InvocationContext,
  type Principal,
  systemPrincipal,
  type TriggerFn,
} from "../../engine/types.ts";
import { assertRealmAccess, DEFAULT_REALM_ID, realmFilter } from "../../shared/access.ts";
import { nowIso } from "../../shared/clock.ts";
import { conflict, isAppError, notFound } from "../../shared/errors.ts";
import { oldestFirst, pageOf } from "../../shared/pagination.ts";
import { recheckRealm, requireRealm } from "../../shared/realm-refs.ts";
import { BINDINGS_SCOPE, type Binding, bindingKey, storedBinding } from "./schema.ts";

/** The agent as the caller sees it: another realm's agent is refused by the agents worker. */
async function agentRealm(trigger: TriggerFn, agentId: string): Promise<string> {
  const agent = await call(trigger, "agent::get", { id: agentId });
  if (agent.status === "deleting") throw notFound(`Agent ${agentId} not found`);
  return agent.realmId;
}

/**
 * The realm an agent lives in, asked as the service (a webhook has no caller); undefined when no such
 * agent exists or it is being deleted.
 */
async function realmOfAgent(trigger: TriggerFn, agentId: string): Promise<string | undefined> {
  try {
    const agent = await call(trigger, "agent::get", { id: agentId }, { auth: systemPrincipal });
    return agent.status === "deleting" ? undefined : agent.realmId;
  } catch (error) {
    if (isAppError(error) && error.code === "not_found") return undefined;
    throw error;
  }
}

/**
 * A stored binding made whole. One written directly as `{agentId}` has no realm: it is the agent's (an
 * agent that does not exist is looked for in the default realm, where the turn then fails as not found).
 */
async function complete(trigger: TriggerFn, key: string, value: unknown): Promise<Binding | null> {
  const stored = storedBinding.safeParse(value);
  if (!stored.success) return null;
  const split = key.indexOf(":");
  const { agentId, realmId, createdAt } = stored.data;
  return {
    platform: typeof stored.data.platform === "string" ? stored.data.platform : key.slice(0, split),
    channelId: typeof stored.data.channelId === "string" ? stored.data.channelId : key.slice(split + 1),
    agentId,
    realmId: realmId ?? (await realmOfAgent(trigger, agentId)) ?? DEFAULT_REALM_ID,
    createdAt: createdAt ?? new Date(0).toISOString(),
  };
}

/** The binding of a platform channel, however it was written; null when there is none. */
export async function bindingAt(
  state: StateClient,
  trigger: TriggerFn,
  platform: string,
  channelId: string,
): Promise<Binding | null> {
  const key = bindingKey(platform, channelId);
  return complete(trigger, key, await state.get<unknown>(BINDINGS_SCOPE, key));
}

export async function bind(
  state: StateClient,
  trigger: TriggerFn,
  input: { platform: string; channelId: string; agentId: string },
  caller: Principal,
): Promise<Binding> {
  const realmId = await agentRealm(trigger, input.agentId);
  // An archived realm is read-only, and one being deleted has its bindings purged before its agents:
  // a binding written then would outlive the realm and keep the channel id from every other realm.
  await requireRealm(trigger, realmId, { write: true });
  const existing = await bindingAt(state, trigger, input.platform, input.channelId);
  // Rebinding another realm's channel would take its conversations: only an admin key does that, by
  // hand. Not a realm key, nor a declaration (config/channels/*.toml, which a migration may have written
  // from an imported project). The channel id is one namespace for all realms, so a taken id cannot read
  // as free; the answer names neither the agent nor the realm.
  if (existing && existing.realmId !== realmId && caller.kind !== "admin") {
    throw conflict(
      `Channel ${input.platform}:${input.channelId} is bound by another realm: choose another channel id`,
    );
  }
  const binding: Binding = { ...input, realmId, createdAt: nowIso() };
  const key = bindingKey(input.platform, input.channelId);
  await state.set(BINDINGS_SCOPE, key, binding);
  await recheckRealm(trigger, realmId, () => state.delete(BINDINGS_SCOPE, key));
  return binding;
}

export async function listBindings(
  state: StateClient,
  trigger: TriggerFn,
  ctx: InvocationContext,
  input: { realmId?: string; platform?: string; limit: number; cursor?: string },
) {
  if (input.realmId !== undefined) assertRealmAccess(ctx, input.realmId);
  const visible = realmFilter(ctx);
  const all: Binding[] = [];
  for await (const entry of state.scan<unknown>(BINDINGS_SCOPE)) {
    const value = await complete(trigger, entry.key, entry.value);
    if (!value) continue;
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
  trigger: TriggerFn,
  ctx: InvocationContext,
  input: { platform: string; channelId: string },
) {
  const key = bindingKey(input.platform, input.channelId);
  const existing = await bindingAt(state, trigger, input.platform, input.channelId);
  const visible = realmFilter(ctx);
  if (!existing || (visible && existing.realmId !== visible)) throw notFound(`No binding of ${key}`);
  await state.delete(BINDINGS_SCOPE, key);
  return undefined;
}
