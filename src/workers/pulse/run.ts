import { DEFAULT_TIMEOUT_MS } from "../../engine/engine.ts";
import type { StateClient } from "../../engine/state/client.ts";
import type { TriggerFn } from "../../engine/types.ts";
import { nowIso } from "../../shared/clock.ts";
import { isAppError } from "../../shared/errors.ts";
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
/** Context reads and record writes around the agent calls. */
const OVERHEAD_MS = 60_000;

export interface RunPlan {
  realmId: string;
  agentId: string;
  source: RunSource;
  contextMode: ContextMode;
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
  const context = await buildContext(deps.trigger, plan, plan.contextMode, plan.budget);
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

class PulseTimeout extends Error {
  constructor(seconds: number) {
    super(`agent::chat timed out after ${seconds} s`);
    this.name = "PulseTimeout";
  }
}

/**
 * One call of agent::chat. Every pulse of an agent continues one session (`pulse:<agentId>`): the
 * agent sees what it did on earlier pulses, and ticks do not pile up a session each.
 */
async function chatOnce(
  trigger: TriggerFn,
  plan: RunPlan,
  context: PulseContext,
): Promise<{ content?: unknown } | null> {
  const request = {
    function_id: "agent::chat",
    payload: { agentId: plan.agentId, message: PULSE_MESSAGE, context, sessionId: `pulse:${plan.agentId}` },
  };
  if (!plan.timeoutSecs) return (await trigger(request)) as { content?: unknown } | null;
  const timeoutMs = plan.timeoutSecs * 1000;
  let timer: NodeJS.Timeout | undefined;
  // Armed before the call, so it fires before the engine's own timer of the same length and the
  // error names the pulse's limit in seconds. The engine's timer still aborts the agent's signal.
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new PulseTimeout(plan.timeoutSecs as number)), timeoutMs);
  });
  try {
    return (await Promise.race([trigger({ ...request, timeout_ms: timeoutMs }), expired])) as {
      content?: unknown;
    } | null;
  } finally {
    clearTimeout(timer);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
