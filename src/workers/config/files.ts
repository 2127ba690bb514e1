import { readdirSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { type FileProblem, readTomlFile as read } from "../../shared/toml-file.ts";
import {
  type AgentFile,
  agentFile,
  type ChannelFile,
  channelFile,
  type HandFile,
  handFile,
} from "./schema.ts";

export type { FileProblem };

export interface Declared {
  agents: Array<{ file: string; name: string; realm: string; config: AgentFile }>;
  channels: Array<{ file: string; config: ChannelFile }>;
  hands: Array<{ file: string; name: string; config: HandFile }>;
  problems: FileProblem[];
}

const DEFAULT_REALM = "realm-default";

function entries(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/**
 * The declarative configuration under `home`: `agents/<name>/agent.toml` and `config/channels/*.toml`.
 * Every file is read on its own: one that is bad is a problem, the others still count. Two files
 * declaring the same agent (name and realm) are a problem for the second.
 */
export function readDeclared(home: string): Declared {
  const declared: Declared = { agents: [], channels: [], hands: [], problems: [] };
  const seen = new Map<string, string>();
  for (const entry of entries(join(home, "agents"))) {
    const file = join(home, "agents", entry, "agent.toml");
    try {
      if (!statSync(file).isFile()) continue;
    } catch {
      continue;
    }
    const { value, problem } = read(file, agentFile, "agent");
    if (problem) {
      declared.problems.push(problem);
      continue;
    }
    const config = value as AgentFile;
    const name = config.name ?? basename(dirname(file));
    const realm = config.realm ?? DEFAULT_REALM;
    const key = `${realm}\u0001${name}`;
    const earlier = seen.get(key);
    if (earlier) {
      declared.problems.push({
        file,
        message: `name: agent ${name} of realm ${realm} is already declared by ${earlier}`,
      });
      continue;
    }
    seen.set(key, file);
    declared.agents.push({ file, name, realm, config });
  }
  for (const entry of entries(join(home, "hands"))) {
    const file = join(home, "hands", entry, "HAND.toml");
    try {
      if (!statSync(file).isFile()) continue;
    } catch {
      continue;
    }
    const { value, problem } = read(file, handFile, "hand");
    if (problem) declared.problems.push(problem);
    else declared.hands.push({ file, name: (value as HandFile).name ?? entry, config: value as HandFile });
  }
  for (const entry of entries(join(home, "config", "channels"))) {
    if (!entry.endsWith(".toml")) continue;
    const file = join(home, "config", "channels", entry);
    const { value, problem } = read(file, channelFile);
    if (problem) declared.problems.push(problem);
    else declared.channels.push({ file, config: value as ChannelFile });
  }
  return declared;
}
