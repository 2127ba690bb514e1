import { describe, expect, it } from "vitest";
import { DUE_SCOPE, dueKey, jobsScope } from "../../../src/workers/tools/schedule/store.ts";
import { call } from "../../helpers/control-plane.ts";
import { toolsServer } from "./setup.ts";

const env = toolsServer();

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe("scheduling tools", () => {
  it("fires a reminder once, as a message to the agent in its own session", async () => {
    const { agentId } = await env.agent();
    const { job } = await env.tool<{ job: { id: string; nextRunAt: string } }>("tool::schedule_reminder", {
      message: "water the plants",
      inSeconds: 1,
    });
    const fired = await waitFor(async () => {
      const { jobs } = await env.tool<{ jobs: Array<{ id: string; status: string; runs: number }> }>(
        "tool::cron_list",
        {},
      );
      const found = jobs.find((j) => j.id === job.id);
      return found?.status === "done" ? found : undefined;
    });
    expect(fired.runs).toBe(1);
    // The job is marked done in the transaction that claims it; the agent's turn runs after.
    await expect
      .poll(async () =>
        JSON.stringify((await call(env.server, "GET", `/api/agents/${agentId}/sessions`)).body),
      )
      .toContain(`cron:${job.id}`);
    expect(JSON.stringify(env.fake.requests)).toContain("Reminder: water the plants");
  });

  it("creates, lists and deletes a recurring job (the sweep's own tests fire it)", async () => {
    await env.agent();
    const { job } = await env.tool<{ job: { id: string; nextRunAt: string } }>("tool::cron_create", {
      schedule: "0 * * * * *",
      message: "tick",
    });
    expect(new Date(job.nextRunAt).getUTCSeconds()).toBe(0);
    const listed = await env.tool<{ jobs: Array<{ id: string }> }>("tool::cron_list", {});
    expect(listed.jobs.map((j) => j.id)).toEqual([job.id]);
    expect(await env.tool("tool::cron_delete", { jobId: job.id })).toEqual({ deleted: job.id });
    const { jobs } = await env.tool<{ jobs: unknown[] }>("tool::cron_list", {});
    expect(jobs).toEqual([]);
    expect((await env.failure("tool::cron_delete", { jobId: job.id })).status).toBe(404);
  });

  it("refuses a recurring job more often than once a minute (each time is a model call)", async () => {
    await env.agent();
    const refused = await env.failure("tool::cron_create", { schedule: "*/10 * * * * *", message: "x" });
    expect(refused.status).toBe(400);
    expect(refused.message).toContain("at most once a minute");
  });

  it("refuses a bad cron expression and a reminder in the past", async () => {
    await env.agent();
    expect(
      (await env.failure("tool::cron_create", { schedule: "every day", message: "x" })).message,
    ).toContain("is not a cron expression");
    expect(
      (await env.failure("tool::schedule_reminder", { message: "x", at: "2001-01-01T00:00:00Z" })).message,
    ).toContain("in the past");
  });

  it("refuses a one-time date as a cron schedule (a reminder is for that)", async () => {
    await env.agent();
    const soon = new Date(Date.now() + 5000).toISOString();
    const refused = await env.failure("tool::cron_create", { schedule: soon, message: "x" });
    expect(refused.status).toBe(400);
    expect(refused.message).toContain("5 fields, or 6 with seconds");
  });

  it("ends a stored job whose schedule fires no more, and never stops the other realms' jobs", async () => {
    const { agentId, realmId } = await env.agent();
    // As an older build could store it: a one-time date, due now, first in the sweep's order.
    const poison = {
      id: "job-poison",
      kind: "cron",
      agentId,
      realmId,
      name: "poison",
      schedule: "2001-01-01T00:00:00Z",
      message: "never again",
      nextRunAt: "2001-01-01T00:00:00.000Z",
      lastRunAt: null,
      lastError: null,
      runs: 0,
      status: "scheduled",
      createdAt: "2001-01-01T00:00:00.000Z",
    };
    const trigger = (function_id: string, payload: unknown) =>
      env.server.service.engine.trigger({ function_id, payload });
    await trigger("state::batch", {
      ops: [
        { type: "set", scope: jobsScope(realmId), key: poison.id, value: poison },
        { type: "set", scope: DUE_SCOPE, key: dueKey(poison), value: { realmId, jobId: poison.id } },
      ],
    });
    const other = await env.agent();
    const { job } = await env.tool<{ job: { id: string } }>(
      "tool::schedule_reminder",
      { message: "still fires", inSeconds: 1 },
      other,
    );
    await waitFor(async () => {
      const { jobs } = await env.tool<{ jobs: Array<{ id: string; status: string }> }>(
        "tool::cron_list",
        {},
        other,
      );
      return jobs.find((j) => j.id === job.id)?.status === "done" ? true : undefined;
    });
    const { jobs } = await env.tool<{ jobs: Array<{ id: string; status: string; runs: number }> }>(
      "tool::cron_list",
      {},
      { agentId, realmId },
    );
    expect(jobs.find((j) => j.id === poison.id)).toMatchObject({ status: "done", runs: 1 });
  });

  it("keeps a todo list: create, list by status, update, delete", async () => {
    await env.agent();
    const { todo } = await env.tool<{ todo: { id: string; status: string } }>("tool::todo_create", {
      title: "write tests",
      priority: "high",
    });
    expect(todo.status).toBe("open");
    await env.tool("tool::todo_create", { title: "other" });
    await env.tool("tool::todo_update", { todoId: todo.id, status: "done" });
    const { todos } = await env.tool<{ todos: Array<{ title: string }> }>("tool::todo_list", {
      status: "done",
    });
    expect(todos.map((t) => t.title)).toEqual(["write tests"]);
    await env.tool("tool::todo_delete", { todoId: todo.id });
    expect((await env.failure("tool::todo_update", { todoId: todo.id, status: "open" })).status).toBe(404);
    expect((await env.failure("tool::todo_update", { todoId: "x", status: "later" })).status).toBe(400);
  });
});
