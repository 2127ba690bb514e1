import { channelSendsScope, sendsScope, spawnsScope } from "./agents/index.ts";
import { snapshotsScope } from "./agents/snapshots.ts";
import { approvalsScope } from "./approvals.ts";
import { sessions } from "./browser/sessions.ts";
import { forgetRecorded, removeFiles, type ToolsDeps, toolAgentsScope } from "./context.ts";
import { purgeKnowledge } from "./knowledge/index.ts";
import { remindersScope } from "./schedule/index.ts";
import { type Job, jobsScope, removeJob } from "./schedule/store.ts";
import { todosScope } from "./schedule/todos.ts";

async function clearScope(deps: ToolsDeps, scope: string): Promise<void> {
  for await (const { key } of deps.state.scan(scope)) await deps.state.delete(scope, key);
}

/**
 * Everything the tools keep for an agent: files, snapshots, todos, notes, collections, approvals, jobs.
 * Files that cannot be removed do not stop the rest: the error goes up after, and the agent stays in
 * toolAgentsScope so a retry (of the agent's or the realm's delete) finds them again.
 */
export async function purgeAgent(
  deps: ToolsDeps,
  realmId: string,
  agentId: string,
  options: { jobs?: boolean } = {},
): Promise<void> {
  await sessions.close(agentId);
  const files = await removeFiles(deps, agentId).then(
    () => null,
    (error: unknown) => error,
  );
  for (const scope of [todosScope(agentId), snapshotsScope(agentId), approvalsScope(agentId)])
    await clearScope(deps, scope);
  await purgeKnowledge(deps.trigger, agentId);
  await deps.state.delete(spawnsScope, agentId);
  await deps.state.delete(sendsScope, agentId);
  await deps.state.delete(channelSendsScope, agentId);
  await deps.state.delete(remindersScope, agentId);
  if (options.jobs !== false) {
    for await (const { value } of deps.state.scan<Job>(jobsScope(realmId)))
      if (value.agentId === agentId) await removeJob(deps.state, value);
  }
  if (files) throw files;
  await deps.state.delete(toolAgentsScope(realmId), agentId);
  forgetRecorded(realmId, agentId);
}

/**
 * Every agent of the realm the tools know of, and every job of the realm. One agent whose purge fails
 * does not spare the others: all are tried, then the first failure goes up (a retry finishes the job).
 */
export async function purgeRealm(deps: ToolsDeps, realmId: string): Promise<number> {
  const agents: string[] = [];
  for await (const { key } of deps.state.scan(toolAgentsScope(realmId))) agents.push(key);
  const failures: unknown[] = [];
  for (const agentId of agents)
    await purgeAgent(deps, realmId, agentId, { jobs: false }).catch((error) => failures.push(error));
  for await (const { value } of deps.state.scan<Job>(jobsScope(realmId))) await removeJob(deps.state, value);
  if (failures.length > 0) throw failures[0];
  return agents.length;
}
