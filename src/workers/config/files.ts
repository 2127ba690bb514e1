import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { parse } from "smol-toml";
import type { z } from "zod";
import {
  type AgentFile,
  agentFile,
  type ChannelFile,
  channelFile,
  type HandFile,
  handFile,
} from "./schema.ts";

export interface FileProblem {
  file: string;
  message: string;
}

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

/** One TOML file checked against its schema: the value, or a problem naming the file, line or field. */
function read<T>(file: string, schema: z.ZodType<T>, unwrap?: string): { value?: T; problem?: FileProblem } {
  let data: unknown;
  try {
    data = parse(readFileSync(file, "utf8"));
  } catch (error) {
    const { message, line, column } = error as Error & { line?: number; column?: number };
    const where = line === undefined ? "" : ` (line ${line}, column ${column})`;
    return { problem: { file, message: `not valid TOML${where}: ${message.split("\n")[0]}` } };
  }
  const table =
    unwrap && data && typeof data === "object" && unwrap in data
      ? (data as Record<string, unknown>)[unwrap]
      : data;
  const result = schema.safeParse(table);
  if (result.success) return { value: result.data };
  const issue = result.error.issues[0];
  const field = issue?.path.join(".") || "(file)";
  return { problem: { file, message: `${field}: ${issue?.message ?? "invalid"}` } };
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
