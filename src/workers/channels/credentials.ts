import { genericVaultName } from "../../channels/generic.ts";
import type { TriggerFn } from "../../engine/types.ts";
import { vaultSecret } from "../../shared/vault-secret.ts";
import type { Adapter } from "./sender.ts";

/**
 * What a new binding will lack, said at bind time rather than found out from replies that never
 * arrive: the vault entries the platform's webhook and replies need that are not there.
 */
export async function missingVaultEntries(
  trigger: TriggerFn,
  adapter: Adapter | undefined,
  channelId: string,
): Promise<string[]> {
  if (!adapter) {
    const name = genericVaultName(channelId);
    return (await vaultSecret(trigger, name))
      ? []
      : [`${name} is not in the vault: only callers with an API key can post to this webhook`];
  }
  const warnings: string[] = [];
  if (!(await vaultSecret(trigger, adapter.vault.secret)))
    warnings.push(`${adapter.vault.secret} is not in the vault: ${adapter.platform} webhooks are refused`);
  const { names, token } = await replyToken(trigger, adapter, channelId);
  if (names.length > 0 && !token) {
    const consequence = adapter.respond
      ? "replies that take longer than the platform waits cannot be sent"
      : "replies cannot be sent";
    const or = names.length > 1 ? ` (nor ${names.slice(1).join(", ")})` : "";
    warnings.push(`${names[0]} is not in the vault${or}: ${consequence}`);
  }
  return warnings;
}

/**
 * The credential a channel's replies go out with: the channel's own where the platform has one per
 * channel (a Page's token), else the platform's; `names` are the vault names read, in that order.
 */
export async function replyToken(
  trigger: TriggerFn,
  adapter: Adapter,
  channelId: string | undefined,
  unprompted = false,
): Promise<{ names: string[]; token?: string }> {
  const own =
    adapter.channelToken && channelId !== undefined ? adapter.channelToken.name(channelId) : undefined;
  const shared = unprompted && adapter.channelToken?.ownForUnprompted ? undefined : adapter.vault.token;
  const names = [own, shared].filter((name): name is string => name !== undefined);
  for (const name of names) {
    const token = await vaultSecret(trigger, name);
    if (token) return { names, token };
  }
  return { names };
}
