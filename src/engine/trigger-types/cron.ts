import { Cron } from "croner";
import { z } from "zod";
import { badRequest } from "../../shared/errors.ts";
import type { Logger } from "../../shared/logger.ts";
import type { TriggerFn, TriggerRecord, TriggerTypeProvider } from "../types.ts";

export const cronConfig = z.strictObject({ expression: z.string().min(1).max(256) });

/** Checks an expression the way the scheduler will read it; the error names the expression. */
export function validateCronExpression(expression: string): void {
  const fields = expression.trim().split(/\s+/).length;
  if (fields !== 6) {
    throw badRequest(
      `Invalid cron expression "${expression}": expected six fields (second minute hour day month weekday), got ${fields}`,
    );
  }
  try {
    new Cron(expression, { paused: true }).stop();
  } catch (error) {
    throw badRequest(`Invalid cron expression "${expression}": ${(error as Error).message}`);
  }
}

/** `cron` triggers: six-field expressions (seconds first), evaluated in UTC. */
export class CronTriggerType implements TriggerTypeProvider {
  readonly id = "cron";
  readonly description = "Runs the function on a six-field cron schedule {expression} (seconds first, UTC)";
  private readonly jobs = new Map<string, Cron>();

  private readonly trigger: TriggerFn;
  private readonly logger: Logger;

  constructor(trigger: TriggerFn, logger: Logger) {
    this.trigger = trigger;
    this.logger = logger;
  }

  register(record: TriggerRecord): void {
    const parsed = cronConfig.safeParse(record.config);
    if (!parsed.success) throw badRequest("cron trigger config needs {expression: string}");
    const { expression } = parsed.data;
    validateCronExpression(expression);
    const job = new Cron(expression, { timezone: "UTC", protect: true }, (self: Cron) => {
      const scheduled = self.currentRun() ?? new Date();
      const payload = {
        trigger: "cron",
        job_id: record.id,
        scheduled_time: scheduled.toISOString(),
        actual_time: new Date().toISOString(),
      };
      this.trigger({ function_id: record.function_id, payload, action: { type: "void" } }).catch((error) =>
        this.logger.warn({ err: error, functionId: record.function_id }, "cron job could not be called"),
      );
    });
    this.jobs.set(record.id, job);
  }

  unregister(record: TriggerRecord): void {
    this.jobs.get(record.id)?.stop();
    this.jobs.delete(record.id);
  }
}
