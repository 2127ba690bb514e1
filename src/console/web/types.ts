/** The shapes the console reads, as the API's OpenAPI document describes them. */
export interface Agent {
  id: string;
  name: string;
  description?: string;
  model: string;
  systemPrompt?: string;
  tools: string[];
  toolProfile: string;
  capabilities?: string[];
  realmId: string;
  status: string;
  createdAt: string;
  resolvedTools?: string[];
}

export interface Model {
  id: string;
  name: string;
  provider: string;
  tier: string;
  supportsTools: boolean;
}

export interface Session {
  id: string;
  title: string;
  messageCount: number;
  updatedAt: string;
}

export interface ToolCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
  output?: unknown;
}

export interface Message {
  role: "user" | "assistant";
  content: string;
  createdAt: string;
  toolCalls?: ToolCall[];
}

export interface Step {
  name: string;
  functionId: string;
  mode: "sequential" | "fanout" | "collect" | "conditional" | "loop";
  condition?: string;
  until?: string;
  maxIterations?: number;
  optional?: boolean;
}

export interface Workflow {
  id: string;
  realmId: string;
  name: string;
  description?: string;
  steps: Step[];
  version: number;
  updatedAt: string;
  missingFunctions?: string[];
}

export interface StepResult {
  stepName: string;
  output: unknown;
  durationMs: number;
  error?: string;
  skipped?: true;
}

export interface Run {
  runId: string;
  workflowId: string;
  realmId?: string;
  status: string;
  input: unknown;
  results: StepResult[];
  error?: string;
  stoppedAt?: string;
  startedAt: string;
  finishedAt?: string;
}
