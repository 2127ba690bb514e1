import { discord } from "./discord/index.ts";
import { github } from "./github/index.ts";
import { line } from "./line/index.ts";
import { matrix } from "./matrix/index.ts";
import { messenger } from "./messenger/index.ts";
import type { VaultNames } from "./platform.ts";
import { slack } from "./slack/index.ts";
import { teams } from "./teams/index.ts";
import { telegram } from "./telegram/index.ts";
import { twilio } from "./twilio/index.ts";
import { whatsapp } from "./whatsapp/index.ts";

/** Every chat platform, in the order their webhooks are registered. */
export const PLATFORMS = [
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
] as const;

export type PlatformName = (typeof PLATFORMS)[number]["platform"];

/** The vault names each platform reads, by platform (what the migrators may write). */
export const CHANNEL_VAULT_NAMES: ReadonlyMap<string, VaultNames> = new Map(
  PLATFORMS.map((platform) => [platform.platform, platform.vault]),
);

/**
 * The vault name a platform reads under this last segment (`bot_token` on Slack:
 * `channel:slack:bot_token`), or undefined when no platform reads it: such a secret has nowhere to go.
 */
export function channelVaultNamed(platform: string, name: string): string | undefined {
  const names = CHANNEL_VAULT_NAMES.get(platform);
  return names && Object.values(names).find((vaultName) => vaultName.split(":").at(-1) === name);
}
