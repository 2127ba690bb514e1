import type { Adapter } from "./adapter.ts";
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
