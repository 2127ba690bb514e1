import { z } from "zod";
import type { Logger } from "../shared/logger.ts";
import type { TriggerFn } from "./types.ts";

/**
 * What workers tell the service's own observers (metrics, logs) about work done in this process: a
 * model call, its cost, a tool call, a pulse run, a workflow's lifecycle. Unlike `publish`, it never
 * leaves the process (in a cluster every node counts only its own work, so Prometheus can add nodes up).
 */
const name = z.string().min(1).max(256);
export const telemetryEvent = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("model_call"),
    provider: name,
    model: name,
    durationMs: z.number().min(0),
    outcome: z.enum(["ok", "error"]),
  }),
  z.object({
    type: z.literal("model_usage"),
    provider: name,
    model: name,
    realmId: name,
    inputTokens: z.number().min(0),
    outputTokens: z.number().min(0),
    costUsd: z.number().min(0),
  }),
  z.object({
    type: z.literal("tool_call"),
    tool: name,
    agentId: name,
    outcome: z.enum(["ok", "error", "denied"]),
    durationMs: z.number().min(0),
    /** Names of the arguments only: their values may be secrets. */
    argumentNames: z.array(z.string()).max(100),
  }),
  z.object({
    type: z.literal("pulse_run"),
    agentId: name,
    realmId: name,
    outcome: z.enum(["completed", "failed", "skipped"]),
    durationMs: z.number().min(0).optional(),
    reason: z.string().max(1000).optional(),
  }),
  z.object({
    /**
     * A channel job's step that failed (the job is retried, then kept as failed): its agent's turn
     * (`channel_turn`), or the delivery of its reply (`channel_delivery`).
     */
    type: z.enum(["channel_turn", "channel_delivery"]),
    platform: name,
    realmId: name,
    agentId: name,
    jobId: name,
    /** The job's attempt (1: its first try; 0: a webhook's own turn, answered at once). */
    attempt: z.number().int().min(0),
    outcome: z.literal("failed"),
    reason: z.string().max(1000),
  }),
  z.object({
    /**
     * A chat platform's message dropped by a turn limit (acknowledged, audited, no turn): past the
     * channel's count, or past its sender's (AGENTOS_CHANNEL_SENDER_TURNS).
     */
    type: z.literal("channel_dropped"),
    platform: name,
    over: z.enum(["channel", "sender"]),
  }),
  z.object({
    /** One flush of the memory embedding queue (counts only: no agent ids, see /metrics). */
    type: z.literal("memory_embedding"),
    embedded: z.number().int().min(0),
    failed: z.number().int().min(0),
    refused: z.number().int().min(0),
    /** Entries the provider refused on their own (left without a vector for good). */
    rejected: z.number().int().min(0).default(0),
    /** Entries this process knows are waiting for a vector, after the flush. */
    pending: z.number().int().min(0),
  }),
  z.object({
    type: z.literal("workflow"),
    event: name,
    workflowId: name,
    runId: name,
    status: name,
    step: z.object({ name, status: name, durationMs: z.number().min(0).optional() }).optional(),
  }),
]);
export type TelemetryEvent = z.infer<typeof telemetryEvent>;

export const TELEMETRY_FUNCTION = "engine::telemetry";

/** Tells the observers, without waiting and without ever failing the work it describes. */
export function report(trigger: TriggerFn, event: TelemetryEvent): void {
  void trigger({ function_id: TELEMETRY_FUNCTION, payload: event, action: { type: "void" } }).catch(
    () => undefined,
  );
}

/**
 * One log line per pulse run, workflow run event and tool call (info; failures at warn), model calls
 * at debug. A tool call's arguments are never logged, only their names.
 */
export function logTelemetry(logger: Logger): (event: TelemetryEvent) => void {
  return (event) => {
    switch (event.type) {
      case "tool_call":
        logger[event.outcome === "ok" ? "info" : "warn"](
          {
            tool: event.tool,
            agentId: event.agentId,
            outcome: event.outcome,
            ms: Math.round(event.durationMs),
            arguments: event.argumentNames,
          },
          "tool call",
        );
        break;
      case "pulse_run":
        logger[event.outcome === "failed" ? "warn" : "info"](
          {
            agentId: event.agentId,
            realmId: event.realmId,
            outcome: event.outcome,
            reason: event.reason,
            ms: event.durationMs,
          },
          "pulse run",
        );
        break;
      case "workflow":
        if (event.step) {
          logger.debug(
            { runId: event.runId, workflowId: event.workflowId, step: event.step },
            "workflow step",
          );
        } else {
          logger[event.event === "failed" ? "warn" : "info"](
            { runId: event.runId, workflowId: event.workflowId, event: event.event, status: event.status },
            "workflow run",
          );
        }
        break;
      case "channel_turn":
      case "channel_delivery":
        // Retries go on for minutes: the first failure of a job says why, the rest only at debug.
        logger[event.attempt <= 1 ? "warn" : "debug"](
          {
            platform: event.platform,
            realmId: event.realmId,
            agentId: event.agentId,
            jobId: event.jobId,
            attempt: event.attempt,
            reason: event.reason,
          },
          event.type === "channel_turn"
            ? "channel message's agent turn failed"
            : "channel reply not delivered",
        );
        break;
      case "model_call":
        logger.debug(
          {
            provider: event.provider,
            model: event.model,
            outcome: event.outcome,
            ms: Math.round(event.durationMs),
          },
          "model call",
        );
        break;
      default:
        break;
    }
  };
}
