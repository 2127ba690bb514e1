import { createHash, randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { Cron } from "croner";
import { z } from "zod";
import { canonicalJson } from "../../shared/canonical-json.ts";
import { nowIso, nowMs } from "../../shared/clock.ts";
import { badRequest } from "../../shared/errors.ts";
import type { Logger } from "../../shared/logger.ts";
import { stateClient } from "../state/client.ts";
import { systemPrincipal, type TriggerFn, type TriggerRecord, type TriggerTypeProvider } from "../types.ts";

export const cronConfig = z.strictObject({
  expression: z.string().min(1).max(256),
  /** Called with the tick's payload first; the tick is skipped when it answers exactly `false` (iii). */
  condition_function_id: z.string().min(1).max(256).optional(),
  /** Fields merged into every tick's payload (e.g. pulse's `{agentId, realmId}`). */
  data: z.record(z.string(), z.unknown()).optional(),
});

/**
 * Checks an expression the way the scheduler will read it (six fields, UTC), and refuses one that never
 * fires; the error names the expression.
 */
export function validateCronExpression(expression: string): void {
  const fields = expression.trim().split(/\s+/).length;
  if (fields !== 6) {
    throw badRequest(
      `Invalid cron expression "${expression}": expected six fields (second minute hour day month weekday), got ${fields}`,
    );
  }
  let job: Cron;
  try {
    job = new Cron(expression, { paused: true, timezone: "UTC" });
  } catch (error) {
    throw badRequest(`Invalid cron expression "${expression}": ${(error as Error).message}`);
  }
  // A well-formed schedule may still name no real date (February 31st): it would never fire.
  const next = job.nextRun();
  job.stop();
  if (next === null) throw badRequest(`Invalid cron expression "${expression}": it never fires`);
}

/**
 * Claims one tick for this node: resolves true when this node runs it, false when another node has it.
 * A rejection skips the tick on this node (logged): better a missed tick than one run twice.
 */
export type CronClaim = (tickKey: string) => Promise<boolean>;

export interface CronTriggerOptions {
  /** Cluster mode: every node schedules every cron trigger, and only the node whose claim succeeds runs a tick. */
  claim?: CronClaim;
}

/**
 * The key that names one tick of one schedule, identical on every node: the scheduled second (ISO,
 * first, so that keys sort by time), the function id and the expression (whitespace-normalised). The
 * trigger id is left out on purpose: it is random per node. So two triggers binding the same function
 * to the same expression count as one schedule in cluster mode.
 */
export function cronTickKey(
  scheduled: Date,
  functionId: string,
  expression: string,
  data?: Record<string, unknown>,
): string {
  const base = `${scheduled.toISOString()}|${functionId}|${normalizeExpression(expression)}`;
  // Two schedules of one function that differ in their data (two agents' pulses) are distinct ticks.
  return data
    ? `${base}|${createHash("sha256").update(canonicalJson(data)).digest("hex").slice(0, 32)}`
    : base;
}

function normalizeExpression(expression: string): string {
  return expression.trim().split(/\s+/).join(" ");
}

/**
 * The tick a run belongs to. croner's `currentRun()` is the moment the timer actually fired (to the
 * second, in UTC): normally the scheduled second, but later when the event loop was blocked. A late run
 * is mapped back to the latest scheduled time at or before it, so a node that fires a `0 * * * * *`
 * tick two seconds late still names it by its minute. A run late by a whole period or more (the loop
 * blocked that long, or node clocks apart by that much) names a later tick: then a tick can run twice
 * or not at all across the cluster.
 */
export function scheduledTick(job: Cron, run: Date): Date {
  const second = new Date(Math.floor(run.getTime() / 1000) * 1000);
  if (job.match(second)) return second;
  // previousRuns(1, t) is the latest scheduled time strictly before t.
  return job.previousRuns(1, new Date(second.getTime() + 1000))[0] ?? second;
}

/** `cron` triggers: six-field expressions (seconds first), evaluated in UTC. */
export class CronTriggerType implements TriggerTypeProvider {
  readonly id = "cron";
  readonly description = "Runs the function on a six-field cron schedule {expression} (seconds first, UTC)";
  private readonly jobs = new Map<string, Cron>();

  private readonly trigger: TriggerFn;
  private readonly logger: Logger;
  private readonly claim: CronClaim | undefined;

  constructor(trigger: TriggerFn, logger: Logger, options: CronTriggerOptions = {}) {
    this.trigger = trigger;
    this.logger = logger;
    this.claim = options.claim;
  }

  register(record: TriggerRecord): void {
    const parsed = cronConfig.safeParse(record.config);
    if (!parsed.success) throw badRequest("cron trigger config needs {expression: string}");
    const { expression, condition_function_id: condition, data } = parsed.data;
    validateCronExpression(expression);
    const job = new Cron(expression, { timezone: "UTC", protect: true }, (self: Cron) => {
      this.tick(record, { expression, condition, data }, self);
    });
    this.jobs.set(record.id, job);
  }

  unregister(record: TriggerRecord): void {
    this.jobs.get(record.id)?.stop();
    this.jobs.delete(record.id);
  }

  private tick(
    record: TriggerRecord,
    schedule: { expression: string; condition?: string; data?: Record<string, unknown> },
    job: Cron,
  ): void {
    const { expression, condition, data } = schedule;
    const scheduled = scheduledTick(job, job.currentRun() ?? new Date(nowMs()));
    const fire = () => {
      // The claim is asynchronous: a trigger unregistered (or an engine shut down) meanwhile stays quiet.
      if (job.isStopped()) return;
      const payload = {
        ...data,
        trigger: "cron",
        job_id: record.id,
        scheduled_time: scheduled.toISOString(),
        actual_time: nowIso(),
      };
      // A tick has no caller: it runs as the system, whatever context the scheduler fires in. The
      // binding's metadata goes with every tick, as iii delivers it.
      const call = {
        function_id: record.function_id,
        payload,
        metadata: record.metadata,
        action: { type: "void" as const },
        auth: systemPrincipal,
      };
      const run = condition ? this.checkCondition(condition, payload, record) : Promise.resolve(true);
      run
        .then((go) => (go ? this.trigger(call) : undefined))
        .catch((error) =>
          this.logger.warn({ err: error, functionId: record.function_id }, "cron job could not be called"),
        );
    };
    const claim = this.claim;
    if (!claim) {
      fire();
      return;
    }
    const tickKey = cronTickKey(scheduled, record.function_id, expression, data);
    Promise.resolve()
      .then(() => claim(tickKey))
      .then(
        (won) => {
          if (won) fire();
        },
        (error) =>
          this.logger.warn(
            { err: error, functionId: record.function_id, tick: tickKey },
            "cron tick skipped: could not claim it",
          ),
      );
  }
  /** True unless the condition function answers exactly false; a failing condition skips the tick. */
  private async checkCondition(condition: string, payload: unknown, record: TriggerRecord): Promise<boolean> {
    const answer = await this.trigger({
      function_id: condition,
      payload,
      metadata: record.metadata,
      auth: systemPrincipal,
    });
    return answer !== false;
  }
}

export const CRON_CLAIMS_SCOPE = "cron_claims";
/** Claims older than this are swept: a tick is claimed within moments of its scheduled second. */
export const CRON_CLAIM_RETENTION_MS = 60 * 60_000;
/** Cluster-wide, at most one sweep per window (the window itself is claimed like a tick). */
export const CRON_SWEEP_WINDOW_MS = 10 * 60_000;
const SWEEP_PAGE = 100;

export interface StateCronClaimsOptions {
  /** This node's name, recorded in its claims (default: host, pid and a random suffix). */
  node?: string;
  logger: Logger;
}

/**
 * Cron tick claims in the state store (cluster mode): a claim is a compare-and-swap create of
 * `cron_claims/<tick key>` (expectedVersion 0), so exactly one node's write succeeds and every other
 * node gets a version conflict. Keys start with the scheduled ISO time, so old claims are the first keys
 * of the scope and a sweep walks them in key order, stopping at the first recent one.
 */
export class StateCronClaims {
  readonly node: string;
  private readonly state: ReturnType<typeof stateClient>;
  private readonly logger: Logger;
  private lastSweepWindow = Number.NaN;
  private sweeping: Promise<void> | null = null;

  constructor(trigger: TriggerFn, options: StateCronClaimsOptions) {
    this.state = stateClient(trigger);
    this.logger = options.logger;
    this.node = options.node ?? `${hostname()}/${process.pid}/${randomBytes(4).toString("hex")}`;
  }

  /** True when this node now owns the tick, false when another node does; rejects on any other failure. */
  async claim(tickKey: string): Promise<boolean> {
    this.maybeSweep();
    return this.create(tickKey);
  }

  /** Deletes claims older than the retention; returns how many. */
  async sweep(now = nowMs()): Promise<number> {
    const cutoff = new Date(now - CRON_CLAIM_RETENTION_MS).toISOString();
    let removed = 0;
    let cursor: string | undefined;
    do {
      const page = await this.state.list<unknown>(CRON_CLAIMS_SCOPE, { limit: SWEEP_PAGE, cursor });
      for (const item of page.items) {
        // Keys are "<ISO time>|...": a key below the bare cutoff time is older than it, and so are all before it.
        if (item.key >= cutoff) return removed;
        await this.state.delete(CRON_CLAIMS_SCOPE, item.key);
        removed++;
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return removed;
  }

  /** Resolves once a background sweep started by a claim has finished (for tests and shutdown). */
  async idle(): Promise<void> {
    await this.sweeping;
  }

  /**
   * Once per window per node, try to claim the window's sweep; the one node that gets it sweeps, in the
   * background. A failed sweep is logged and retried in the next window.
   */
  private maybeSweep(): void {
    const now = nowMs();
    const window = Math.floor(now / CRON_SWEEP_WINDOW_MS);
    if (this.sweeping || window === this.lastSweepWindow) return;
    this.lastSweepWindow = window;
    const sweepKey = `${new Date(window * CRON_SWEEP_WINDOW_MS).toISOString()}|sweep`;
    this.sweeping = this.create(sweepKey)
      .then(async (won) => {
        if (!won) return;
        const removed = await this.sweep(now);
        if (removed > 0) this.logger.debug({ removed }, "swept old cron claims");
      })
      .catch((error) => this.logger.warn({ err: error }, "sweeping old cron claims failed"))
      .finally(() => {
        this.sweeping = null;
      });
  }

  private async create(key: string): Promise<boolean> {
    try {
      await this.state.set(CRON_CLAIMS_SCOPE, key, { node: this.node, claimedAt: nowIso() }, 0);
      return true;
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code === "conflict") return false;
      throw error;
    }
  }
}
