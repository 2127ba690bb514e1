/**
 * The intermediate model every framework reader produces and the one writer consumes: what a project
 * holds, in our terms but before any of our files exist. A reader never writes; the writer never reads
 * a framework's files.
 */

export const FRAMEWORKS = ["openclaw", "langchain", "langgraph", "crewai", "autogen", "openfang"] as const;
export type Framework = (typeof FRAMEWORKS)[number];

/** Where an item came from: `file` or `file:line`. */
export type Source = string;

export interface SourceAgent {
  name: string;
  description?: string;
  /** The model as the source names it (mapped to the catalog by the writer). */
  model?: string;
  systemPrompt?: string;
  /** Tool names as the source names them (mapped by the writer). */
  tools: string[];
  temperature?: number;
  maxTokens?: number;
  source: Source;
}

/** A tool the source defines or uses. `mcp` when the source runs it as an MCP server. */
export interface SourceTool {
  name: string;
  description?: string;
  source: Source;
  mcp?: { command?: string; args?: string[]; cwd?: string; env?: Record<string, string>; url?: string };
}

export interface SourceChannel {
  platform: string;
  /** The platform's channel, chat or room id; `*`-less: a channel without one is skipped. */
  channelId: string;
  agent: string;
  source: Source;
}

export interface SourceSchedule {
  name: string;
  agent: string;
  /** Cron expression (5 or 6 fields). */
  cron: string;
  /** What the agent is told each time; without it, the agent's pulse. */
  task?: string;
  source: Source;
}

export interface SourceWorkflow {
  name: string;
  description?: string;
  /** Each step: an agent given a task (the previous step's output follows as context). */
  steps: Array<{ name: string; agent: string; task: string }>;
  source: Source;
}

export interface SourceSecret {
  /** The vault entry it goes to (e.g. `provider:openai:api_key`, `channel:slack:signing_secret`). */
  vaultName: string;
  value: string;
  source: Source;
}

export interface SourceSession {
  agent: string;
  id: string;
  messages: Array<{ role: string; content: string }>;
  source: Source;
}

export interface Skipped {
  type: ItemType;
  name: string;
  reason: string;
  source?: Source;
}

export const ITEM_TYPES = ["agent", "channel", "tool", "cron", "workflow", "secret", "session"] as const;
export type ItemType = (typeof ITEM_TYPES)[number];

export interface SourceProject {
  framework: Framework;
  configPath: string;
  version?: string;
  agents: SourceAgent[];
  tools: SourceTool[];
  channels: SourceChannel[];
  schedules: SourceSchedule[];
  workflows: SourceWorkflow[];
  secrets: SourceSecret[];
  sessions: SourceSession[];
  skipped: Skipped[];
}

export function emptyProject(framework: Framework, configPath: string): SourceProject {
  return {
    framework,
    configPath,
    agents: [],
    tools: [],
    channels: [],
    schedules: [],
    workflows: [],
    secrets: [],
    sessions: [],
    skipped: [],
  };
}

/** A framework: where it keeps its configuration, and how to read it into the intermediate model. */
export interface FrameworkReader {
  name: Framework;
  /** The configuration in `dir` (a file or the project directory), or undefined when there is none. */
  detect(dir: string): { configPath: string; version?: string } | undefined;
  /** Reads the project at configPath (a file or a directory). Throws a MigrationInputError naming file and line. */
  read(configPath: string): Promise<SourceProject>;
}

/** Bad input: a file that does not parse, a missing file. Carries the file and line when known. */
export class MigrationInputError extends Error {
  readonly file: string;
  readonly line?: number;

  constructor(file: string, message: string, line?: number) {
    super(`${file}${line === undefined ? "" : `:${line}`}: ${message}`);
    this.name = "MigrationInputError";
    this.file = file;
    this.line = line;
  }
}
