import { type Adapter, type VaultNames, vaultNames } from "./adapter.ts";
import { discord } from "./discord/index.ts";
import { github } from "./github/index.ts";
import { line } from "./line/index.ts";
import { matrix } from "./matrix/index.ts";
import { messenger } from "./messenger/index.ts";
import { slack } from "./slack/index.ts";
import { teams } from "./teams/index.ts";
import { telegram } from "./telegram/index.ts";
import { twilio } from "./twilio/index.ts";
import { whatsapp } from "./whatsapp/index.ts";

/** Every platform adapter. */
export const ADAPTERS: Adapter[] = [
  slack,
  discord,
  telegram,
  whatsapp,
  messenger,
  line,
  twilio,
  teams,
  github,
  matrix,
];

/** The vault names each platform's adapter reads, by platform (what the migrators may write). */
export const CHANNEL_VAULT_NAMES: ReadonlyMap<string, VaultNames> = new Map(
  ADAPTERS.map((adapter) => [adapter.platform, vaultNames(adapter)]),
);

/**
 * The vault name a platform's adapter reads under this last segment (`bot_token` on Slack:
 * `channel:slack:bot_token`), or undefined when no adapter reads it: such a secret has nowhere to go.
 */
export function channelVaultNamed(platform: string, name: string): string | undefined {
  const names = CHANNEL_VAULT_NAMES.get(platform);
  return names && Object.values(names).find((vaultName) => vaultName.split(":").at(-1) === name);
}
