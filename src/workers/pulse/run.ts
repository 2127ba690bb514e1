import { call } from "../../engine/call.ts";
import { DEFAULT_TIMEOUT_MS } from "../../engine/engine.ts";
import type { StateClient } from "../../engine/state/client.ts";
import { report } from "../../engine/telemetry.ts";
import type { TriggerFn } from "../../engine/types.ts";
import { nowIso } from "../../shared/clock.ts";
import { AppError, isAppError } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { buildContext, type PulseContext } from "./context.ts";
import type { ContextMode, PulseRun, RunSource } from "./schema.ts";
import { createRun, saveRun } from "./store.ts";

export const PULSE_MESSAGE =
  "You have been invoked via pulse. Review your current context and take appropriate action.";
/** Characters of the agent's reply (and of an error) kept in the run record. */
export const OUTPUT_LIMIT = 4000;
const RETRY_BASE_MS = 250;
const RETRY_CAP_MS = 10_000;
/**
 * Context reads (each bounded by CONTEXT_READ_TIMEOUT_MS, made in parallel) and record writes around
 * the agent calls.
 */
const OVERHEAD_MS = 60_000;

export interface RunPlan {
  realmId: string;
  agentId: string;
  source: RunSource;
  contextMode: ContextMode;
  /** Full context: add the agent's knowledge-graph neighbourhood of its active missions. */
  contextGraph?: boolean;
  timeoutSecs?: number;
  maxRetries?: number;
  /** A ledger answer the caller already has (ticks check before running). */
  budget?: unknown;
}

export interface RunDeps {
  trigger: TriggerFn;
  state: StateClient;
}

/**
 * Errors that say the request itself is wrong (unknown or paused agent, over budget, refused): asking
 * again cannot succeed, so they are not retried. Provider failures and timeouts are.
 */
const FINAL_CODES = new Set([
  "validation",
  "unauthorized",
  "forbidden",
  "not_found",
  "conflict",
  "budget_exceeded",
  "payload_too_large",
  "unprocessable",
]);

const retryDelayMs = (attempt: number) => Math.min(RETRY_BASE_MS * 2 ** (attempt - 1), RETRY_CAP_MS);

/** The longest a run can take: every attempt timing out plus the pauses between them. */
export function maxRunDurationMs(plan: Pick<RunPlan, "timeoutSecs" | "maxRetries">): number {
  const attempts = (plan.maxRetries ?? 0) + 1;
  const perAttempt = plan.timeoutSecs ? plan.timeoutSecs * 1000 : DEFAULT_TIMEOUT_MS;
  return attempts * (perAttempt + RETRY_CAP_MS) + OVERHEAD_MS;
}

/**
 * One pulse run: the context is built, the run is stored as Running with the exact context passed
 * (so a crash mid-run leaves a visible record), then the agent is asked, with retries, and the run is
 * stored again as Completed or Failed. `onStored` learns the run's key as soon as it is written. All
 * agent calls run under the caller's principal: the system for cron ticks, the API key for an invoke.
 */
export async function executePulse(
  deps: RunDeps,
  plan: RunPlan,
  onStored: (runKey: string) => Promise<void> = async () => undefined,
): Promise<PulseRun> {
  const context = await buildContext(deps.trigger, plan, plan.contextMode, plan.budget, plan.contextGraph);
  const started: PulseRun = {
    id: newId("run"),
    agentId: plan.agentId,
    realmId: plan.realmId,
    status: "Running",
    source: plan.source,
    contextSnapshot: context,
    startedAt: nowIso(),
    attempts: 0,
  };
  const key = await createRun(deps.state, started);
  await onStored(key);
  const outcome = await chatWithRetries(deps.trigger, plan, context);
  const finished: PulseRun = {
    ...started,
    status: outcome.ok ? "Completed" : "Failed",
    attempts: outcome.attempts,
    finishedAt: nowIso(),
    ...(outcome.ok ? { output: outcome.content.slice(0, OUTPUT_LIMIT) } : { error: outcome.error }),
  };
  await saveRun(deps.state, key, finished);
  report(deps.trigger, {
    type: "pulse_run",
    agentId: plan.agentId,
    realmId: plan.realmId,
    outcome: outcome.ok ? "completed" : "failed",
    durationMs: Math.max(0, Date.parse(finished.finishedAt as string) - Date.parse(started.startedAt)),
    ...(outcome.ok ? {} : { reason: outcome.error.slice(0, 1000) }),
  });
  return finished;
}

type Outcome =
  | { ok: true; content: string; attempts: number }
  | { ok: false; error: string; attempts: number };

async function chatWithRetries(trigger: TriggerFn, plan: RunPlan, context: PulseContext): Promise<Outcome> {
  const maxAttempts = (plan.maxRetries ?? 0) + 1;
  for (let attempt = 1; ; attempt++) {
    try {
      const reply = await chatOnce(trigger, plan, context);
      return {
        ok: true,
        content: typeof reply?.content === "string" ? reply.content : "",
        attempts: attempt,
      };
    } catch (error) {
      const final = isAppError(error) && FINAL_CODES.has(error.code);
      if (final || attempt >= maxAttempts) {
        return { ok: false, error: describe(error).slice(0, OUTPUT_LIMIT), attempts: attempt };
      }
      await new Promise((resolve) => setTimeout(resolve, retryDelayMs(attempt)));
    }
  }
}

/** How the engine words the timeout of an agent::chat call (engine.ts). */
const ENGINE_TIMEOUT = "Function agent::chat timed out";

/**
 * One call of agent::chat. Every pulse of an agent continues one session (`pulse:<agentId>`): the
 * agent sees what it did on earlier pulses, and ticks do not pile up a session each.
 *
 * `timeoutSecs` is the engine's timeout of the call: when it expires the engine aborts agent::chat's
 * `ctx.signal` in the same moment it fails this call. agent::chat aborts its model request with it,
 * starts no further model or tool call and stores nothing, so a timed-out attempt has stopped when this
 * returns: a retry never runs beside it, and the lease is not released while it goes on. (A tool
 * function the turn had already called finishes under its own engine timeout, as any call does.)
 * Without `timeoutSecs` the engine's default timeout applies.
 */
async function chatOnce(
  trigger: TriggerFn,
  plan: RunPlan,
  context: PulseContext,
): Promise<{ content?: unknown } | null> {
  const timeoutMs = plan.timeoutSecs ? plan.timeoutSecs * 1000 : undefined;
  try {
    return await call(
      trigger,
      "agent::chat",
      { agentId: plan.agentId, message: PULSE_MESSAGE, context, sessionId: `pulse:${plan.agentId}` },
      timeoutMs ? { timeout_ms: timeoutMs } : {},
    );
  } catch (error) {
    // The engine's timeout of this very call (not one from inside the turn, such as the provider's or a
    // tool's), named in the pulse's own unit.
    if (isAppError(error) && error.code === "timeout" && error.message.startsWith(ENGINE_TIMEOUT)) {
      throw new AppError("timeout", `agent::chat timed out after ${plan.timeoutSecs} s`, { cause: error });
    }
    throw error;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
