import { Cron } from "croner";
import { z } from "zod";
import type { StateClient } from "../../../engine/state/client.ts";
import type { BatchOp } from "../../../engine/state/types.ts";
import { nowIso } from "../../../shared/clock.ts";
import { badRequest } from "../../../shared/errors.ts";
import { newId } from "../../../shared/ids.ts";

export const jobsScope = (realmId: string) => `tool_jobs:${realmId}`;
/** Due times: keys `<ISO time>\u0001<realmId>\u0001<jobId>`, so a listing in key order is a listing by time. */
export const DUE_SCOPE = "tool_jobs_due";
export const dueKey = (job: Pick<Job, "nextRunAt" | "realmId" | "id">) =>
  `${job.nextRunAt}\u0001${job.realmId}\u0001${job.id}`;

export const jobRecord = z.object({
  id: z.string(),
  kind: z.enum(["cron", "reminder"]),
  name: z.string(),
  agentId: z.string(),
  realmId: z.string(),
  /** cron: the expression (5 fields, or 6 with seconds), in UTC. */
  schedule: z.string().nullable(),
  message: z.string(),
  /** Set for a hand that names steps: the workflow run at each time (message is its input). */
  workflowId: z.string().optional(),
  status: z.enum(["scheduled", "done"]),
  nextRunAt: z.string().nullable(),
  lastRunAt: z.string().nullable(),
  lastError: z.string().nullable(),
  /** Set while a time's turn (or run) is under way: the job does not fire again until it ends. */
  runningSince: z.string().nullable().optional(),
  /** Times the job was due while its previous turn was still under way (those times were skipped). */
  skipped: z.number().optional(),
  runs: z.number(),
  createdAt: z.string(),
});
export type Job = z.infer<typeof jobRecord>;

/**
 * The shortest time between two turns of an agent's recurring task. An agent (its model steered by
 * whatever it reads) schedules these for itself, and each time is a model call: every second, 100 jobs
 * would be 100 turns a second for one agent.
 */
export const MIN_INTERVAL_MS = 60_000;

/** The next time the expression fires after `after`, or an error naming what is wrong with it. */
export function nextRun(schedule: string, after = new Date()): string {
  const next = upcoming(schedule, after);
  if (!next) throw badRequest(`schedule ${JSON.stringify(schedule)} never fires`);
  return next;
}

/**
 * Refuses a schedule that fires more often than once a minute. Its seconds field repeats within every
 * minute it fires in, so the first two minutes of times (at most 120) show the shortest gap.
 */
export function assertAtMostOncePerMinute(schedule: string, after = new Date()): void {
  upcoming(schedule, after); // the expression's own errors first
  const times = new Cron(schedule, { paused: true, timezone: "UTC" }).nextRuns(121, after);
  for (let i = 1; i < times.length; i++) {
    const gapMs = (times[i] as Date).getTime() - (times[i - 1] as Date).getTime();
    if (gapMs < MIN_INTERVAL_MS) {
      throw badRequest(
        `schedule ${JSON.stringify(schedule)} fires ${gapMs / 1000} s apart: a recurring task fires at most once a minute`,
      );
    }
  }
}

/**
 * The next time after `after`, or null when there is none (a schedule that has fired its last time).
 * Only cron expressions of 5 fields, or 6 with seconds: the library also takes an ISO date as a
 * one-time pattern, whose "next run" vanishes once it has fired.
 */
export function upcoming(schedule: string, after = new Date()): string | null {
  const fields = schedule.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) {
    throw badRequest(
      `schedule ${JSON.stringify(schedule)} is not a cron expression: it needs 5 fields, or 6 with seconds (a one-time task is a reminder)`,
    );
  }
  let cron: Cron;
  try {
    cron = new Cron(schedule, { paused: true, timezone: "UTC" });
  } catch (error) {
    throw badRequest(
      `schedule ${JSON.stringify(schedule)} is not a cron expression: ${(error as Error).message}`,
    );
  }
  return cron.nextRun(after)?.toISOString() ?? null;
}

/** The writes that store a job and its due entry (none once it is done). */
export function jobWrites(job: Job): BatchOp[] {
  const ops: BatchOp[] = [{ type: "set", scope: jobsScope(job.realmId), key: job.id, value: job }];
  if (job.status === "scheduled" && job.nextRunAt) {
    ops.push({
      type: "set",
      scope: DUE_SCOPE,
      key: dueKey(job),
      value: { realmId: job.realmId, jobId: job.id },
    });
  }
  return ops;
}

/** A job and its due entry, written together (replacing the previous due entry when the time moved). */
export async function saveJob(state: StateClient, job: Job, previous?: Job): Promise<void> {
  const ops = jobWrites(job);
  if (previous?.nextRunAt && previous.nextRunAt !== job.nextRunAt) {
    ops.push({ type: "delete", scope: DUE_SCOPE, key: dueKey(previous) });
  }
  await state.batch(ops);
}

export async function removeJob(state: StateClient, job: Job): Promise<void> {
  const ops: BatchOp[] = [{ type: "delete", scope: jobsScope(job.realmId), key: job.id }];
  if (job.nextRunAt) ops.push({ type: "delete", scope: DUE_SCOPE, key: dueKey(job) });
  await state.batch(ops);
}

/** A recurring workflow run for an agent (a hand that names steps); the sweep fires it like any job. */
export async function scheduleWorkflow(
  state: StateClient,
  realmId: string,
  input: { agentId: string; workflowId: string; schedule: string; input: string; name?: string },
): Promise<Job> {
  const job: Job = {
    id: newId("job"),
    kind: "cron",
    name: input.name ?? input.workflowId,
    agentId: input.agentId,
    realmId,
    schedule: input.schedule,
    message: input.input,
    workflowId: input.workflowId,
    status: "scheduled",
    nextRunAt: nextRun(input.schedule),
    lastRunAt: null,
    lastError: null,
    runs: 0,
    createdAt: nowIso(),
  };
  await saveJob(state, job);
  return job;
}
