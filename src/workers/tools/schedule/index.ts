import { z } from "zod";
import { serialized } from "../../../engine/state/cas.ts";
import { stateClient } from "../../../engine/state/client.ts";
import { nowIso } from "../../../shared/clock.ts";
import { badRequest, notFound } from "../../../shared/errors.ts";
import { newId } from "../../../shared/ids.ts";
import { agentIdField } from "../fields.ts";
import { countPerMinute } from "../rate.ts";
import { defineTool, type ToolContext } from "../tool.ts";
import {
  assertAtMostOncePerMinute,
  type Job,
  jobRecord,
  jobsScope,
  nextRun,
  removeJob,
  saveJob,
} from "./store.ts";
import { todoTools } from "./todos.ts";

const MAX_JOBS_PER_AGENT = 100;
/**
 * Reminders one agent may set per minute. A reminder may fire a second after it is set, and a done one
 * no longer counts against MAX_JOBS_PER_AGENT: without this, an agent's model (or each reminder's own
 * turn) set 100 at a time and took a turn every few milliseconds, where its recurring tasks may fire
 * at most once a minute each.
 */
export const MAX_REMINDERS_PER_MINUTE = 10;
export const remindersScope = "tool_reminders_set";
const message = z
  .string()
  .trim()
  .min(1, "message is required")
  .max(8000)
  .describe("What you will be told when it fires");

async function agentJobs(ctx: ToolContext, agentId: string, realmId: string): Promise<Job[]> {
  const jobs: Job[] = [];
  for await (const { value } of stateClient(ctx.trigger).scan<Job>(jobsScope(realmId)))
    if (value.agentId === agentId) jobs.push(value);
  return jobs.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

async function createJob(
  ctx: ToolContext,
  agentId: string,
  fields: Pick<Job, "kind" | "name" | "schedule" | "message" | "nextRunAt">,
): Promise<Job> {
  const { realmId } = await ctx.agent(agentId);
  // One at a time per agent: counted side by side, a step's parallel calls all saw room for themselves.
  return serialized(`tool_job_create\u0000${agentId}`, async () => {
    const existing = await agentJobs(ctx, agentId, realmId);
    if (existing.filter((job) => job.status === "scheduled").length >= MAX_JOBS_PER_AGENT) {
      throw badRequest(`You have ${MAX_JOBS_PER_AGENT} scheduled jobs already: delete some first`);
    }
    const job: Job = {
      id: newId("job"),
      agentId,
      realmId,
      status: "scheduled",
      lastRunAt: null,
      lastError: null,
      runs: 0,
      createdAt: nowIso(),
      ...fields,
    };
    const state = stateClient(ctx.trigger);
    await saveJob(state, job);
    // Deleted meanwhile, the agent is marked before its jobs are purged: that purge found this job, or
    // the mark is seen here and the job taken back. Else it fired for no one every minute, for good.
    await ctx.agent(agentId).catch(async (error: unknown) => {
      await removeJob(state, job);
      throw error;
    });
    return job;
  });
}

const cronCreate = defineTool({
  id: "tool::cron_create",
  actsFor: "agent",
  description:
    "Schedule a recurring task for yourself: at every time the cron expression (UTC; 5 fields, or 6 with seconds; at most once a minute) names, you receive message in session cron:<jobId>; a time that comes while the previous one's turn is still under way is skipped. {job}.",
  input: z.strictObject({
    agentId: agentIdField,
    schedule: z.string().min(1).max(200).describe("e.g. 0 9 * * 1-5"),
    message,
    name: z.string().max(200).optional(),
  }),
  output: z.object({ job: jobRecord }),
  risky: true,
  async run({ agentId, schedule, message, name }, ctx) {
    assertAtMostOncePerMinute(schedule);
    return {
      job: await createJob(ctx, agentId, {
        kind: "cron",
        name: name ?? schedule,
        schedule,
        message,
        nextRunAt: nextRun(schedule),
      }),
    };
  },
});

const cronList = defineTool({
  id: "tool::cron_list",
  actsFor: "agent",
  description:
    "Your scheduled jobs (recurring tasks and reminders): {jobs: [{id, kind, schedule, message, nextRunAt, lastRunAt, runs, status}]}.",
  input: z.strictObject({ agentId: agentIdField }),
  async run({ agentId }, ctx) {
    const { realmId } = await ctx.agent(agentId);
    return { jobs: await agentJobs(ctx, agentId, realmId) };
  },
});

const cronDelete = defineTool({
  id: "tool::cron_delete",
  actsFor: "agent",
  description: "Delete one of your scheduled jobs (recurring or reminder); it never fires again. {deleted}.",
  input: z.strictObject({ agentId: agentIdField, jobId: z.string().min(1).max(256) }),
  async run({ agentId, jobId }, ctx) {
    const { realmId } = await ctx.agent(agentId);
    const state = stateClient(ctx.trigger);
    const job = await state.get<Job>(jobsScope(realmId), jobId);
    if (!job || job.agentId !== agentId) throw notFound(`You have no job ${jobId}`);
    await removeJob(state, job);
    return { deleted: jobId };
  },
});

const scheduleReminder = defineTool({
  id: "tool::schedule_reminder",
  actsFor: "agent",
  description:
    'Remind yourself once: at (ISO time) or in inSeconds you receive "Reminder: <message>" in session cron:<jobId>. {job}.',
  input: z
    .strictObject({
      agentId: agentIdField,
      message,
      at: z.iso.datetime({ offset: true, error: "at must be an ISO 8601 time" }).optional(),
      inSeconds: z
        .number()
        .int()
        .min(1)
        .max(366 * 24 * 3600)
        .optional(),
    })
    .refine(
      (input) => (input.at === undefined) !== (input.inSeconds === undefined),
      "give either at or inSeconds",
    ),
  async run({ agentId, message, at, inSeconds }, ctx) {
    const when = at ? new Date(at) : new Date(Date.now() + (inSeconds as number) * 1000);
    if (when.getTime() <= Date.now()) throw badRequest(`at ${at} is in the past`);
    // Counted only for an agent the caller may act as: another realm's key burns no one's quota.
    await ctx.agent(agentId);
    await countPerMinute(
      ctx.trigger,
      remindersScope,
      agentId,
      MAX_REMINDERS_PER_MINUTE,
      `You set ${MAX_REMINDERS_PER_MINUTE} reminders this minute: wait before setting more (a recurring task is tool::cron_create)`,
    );
    return {
      job: await createJob(ctx, agentId, {
        kind: "reminder",
        name: message.slice(0, 80),
        schedule: null,
        message,
        nextRunAt: when.toISOString(),
      }),
    };
  },
});

/** Jobs of an agent go with it. */
export async function purgeAgentJobs(
  ctx: { trigger: ToolContext["trigger"] },
  realmId: string,
  agentId: string,
): Promise<void> {
  const state = stateClient(ctx.trigger);
  for await (const { value } of state.scan<Job>(jobsScope(realmId)))
    if (value.agentId === agentId) await removeJob(state, value);
}

export const scheduleTools = [cronCreate, cronList, cronDelete, scheduleReminder, ...todoTools];
