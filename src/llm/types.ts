import type { ModelMessage, ToolSet } from "ai";
import type { TriggerFn } from "../engine/types.ts";

/**
 * The LLM layer's contract: what the catalog gives it, what a caller asks and what it answers. Every
 * module of `src/llm` depends on this file and this file on none of them, so the dispatcher, its
 * drivers and the pass-through never import each other for a type.
 */

/** A catalog entry as the LLM layer needs it (the catalog worker owns the full record). */
export interface ModelEntry {
  id: string;
  provider: string;
  name?: string;
  contextWindow: number;
  maxOutput: number;
  inputPrice: number;
  outputPrice: number;
  supportsTools: boolean;
  local?: boolean;
}

/** A provider as the catalog describes it; `driver` picks the AI SDK provider package. */
export interface ProviderEntry {
  id: string;
  name?: string;
  baseUrl: string;
  envKey?: string;
  local?: boolean;
  /** A local provider whose address the operator named: realms other than the default may use it. */
  openToRealms?: boolean;
  driver: "anthropic" | "openai" | "google" | "openai_compat";
}

/** A model and the provider that serves it. */
export interface ModelChoice {
  model: ModelEntry;
  provider: ProviderEntry;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

/** USD for one call: usage × the catalog's per-million prices. */
export function costOf(model: Pick<ModelEntry, "inputPrice" | "outputPrice">, usage: Usage): number {
  return (usage.inputTokens * model.inputPrice + usage.outputTokens * model.outputPrice) / 1_000_000;
}

/** How long a model call may take, retries included, when the caller does not say. */
export const DEFAULT_LLM_TIMEOUT_MS = 120_000;

/**
 * Why a model stopped, in the AI SDK's words (what a GenerateResult reports whichever driver ran):
 * "tool-calls" when it asked for tools, "length" when cut at max tokens.
 */
export type FinishReason = "stop" | "length" | "content-filter" | "tool-calls" | "error" | "other";

export interface GenerateRequest {
  /** The model to use first, then each fallback in order when a call fails. */
  choices: ModelChoice[];
  system?: string;
  messages: ModelMessage[];
  tools?: ToolSet;
  /** auto (default), none, required, or one tool by name. */
  toolChoice?: "auto" | "none" | "required" | { type: "tool"; toolName: string };
  /** Model calls in one request, tool round trips included. */
  maxSteps?: number;
  temperature?: number;
  maxTokens?: number;
  timeoutMs?: number;
  /** Retries per model on 429 and 5xx, honouring Retry-After (AI SDK backoff). */
  maxRetries?: number;
  abortSignal?: AbortSignal;
  env: NodeJS.ProcessEnv;
  trigger: TriggerFn;
  /**
   * After each model call, with its usage (cost accounting). A returned promise (the cost being
   * recorded) is awaited before the turn's result is returned, so an answered turn's cost is stored.
   */
  onStepUsage?: (choice: ModelChoice, usage: Usage) => void | Promise<void>;
  /** Before each model call, tool round trips included; throwing stops the turn (a budget check). */
  beforeStep?: () => Promise<void>;
  /**
   * The turn as it happens: the model is then streamed, and its text deltas, tool calls and tool results
   * come here in order. Once something was told, a failing model is not replaced by a fallback.
   */
  onEvent?: (event: TurnEvent) => void;
}

/** What an agent's streamed turn tells: that it started (its checks passed), then the model's events. */
export type TurnProgress = { type: "start"; model: string; sessionId: string | null } | TurnEvent;

/** What a streamed turn tells as it goes. */
export type TurnEvent =
  | { type: "text"; text: string }
  | { type: "tool_call"; toolCallId: string; toolName: string; input: unknown }
  | { type: "tool_result"; toolCallId: string; toolName: string; output: unknown };

export interface GenerateResult {
  content: string;
  model: string;
  usage: Usage;
  finishReason: string;
  /** Every tool call of the turn, in order, with its result (`output`) when it ran. */
  toolCalls: Array<{ toolCallId: string; toolName: string; input: unknown; output?: unknown }>;
}

/**
 * One way of running a model's turn (tool round trips included) on one model: the AI SDK, or our own
 * loop over OpenAI's wire format. `generate` picks one per model and handles the fallbacks.
 */
export interface TurnDriver {
  /** Whether this driver sends the turn exactly as asked (else another one must take it). */
  takes(choice: ModelChoice, request: GenerateRequest): boolean;
  run(choice: ModelChoice, request: GenerateRequest): Promise<GenerateResult>;
}
