import { PLATFORMS, type PlatformName } from "../../channels/platforms.ts";
import type { Adapter, Sender } from "./sender.ts";
import { discord } from "./senders/discord.ts";
import { github } from "./senders/github.ts";
import { line } from "./senders/line.ts";
import { matrix } from "./senders/matrix.ts";
import { messenger } from "./senders/messenger.ts";
import { slack } from "./senders/slack.ts";
import { teams } from "./senders/teams.ts";
import { telegram } from "./senders/telegram.ts";
import { twilio } from "./senders/twilio.ts";
import { whatsapp } from "./senders/whatsapp.ts";

/** One sender per platform: a platform added to src/channels without one does not compile. */
const SENDERS: { readonly [Name in PlatformName]: Sender } = {
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
};

/** Every platform with its sender, in the platforms' order. */
export const ADAPTERS: Adapter[] = PLATFORMS.map((platform) => ({
  ...platform,
  ...SENDERS[platform.platform],
}));
