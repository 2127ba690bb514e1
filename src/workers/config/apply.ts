import { createHash } from "node:crypto";
import { agentPrincipal } from "../../engine/acting-agent.ts";
import { call } from "../../engine/call.ts";
import type { StateClient } from "../../engine/state/client.ts";
import { systemCall } from "../../engine/system-call.ts";
import { systemPrincipal, type TriggerFn } from "../../engine/types.ts";
import { agentChatSteps } from "../../shared/agent-steps.ts";
import { isAppError } from "../../shared/errors.ts";
import { agentByName, DECLARED_SCOPE, type DeclaredAgent, resolveAgentId } from "./agents.ts";
import type { Declared, FileProblem } from "./files.ts";
import type { AgentFile, HandFile } from "./schema.ts";

export interface ReloadReport {
  agents: { created: string[]; updated: string[]; unchanged: string[] };
  channels: { bound: string[] };
  hands: { scheduled: string[]; unchanged: string[] };
  problems: FileProblem[];
}

function agentFields(config: AgentFile) {
  return {
    description: config.description,
    model: config.model,
    // Left out when the file has none, like every field here: the agent keeps what it has.
    embeddingModel: config.embedding_model,
    systemPrompt: config.system_prompt,
    toolProfile: config.tool_profile,
    tools: config.tools,
    capabilities: config.capabilities,
    temperature: config.temperature,
    maxTokens: config.max_tokens,
  };
}

/**
 * Makes the service match the files: each declared agent is created once and updated when its file
 * changed (keyed by name and realm, so it keeps its id, sessions and memory across reloads); each
 * channel file binds its channel to the named agent. A file that cannot be applied is a problem naming
 * it; the others are applied.
 */
export async function applyDeclared(
  state: StateClient,
  trigger: TriggerFn,
  declared: Declared,
): Promise<ReloadReport> {
  const report: ReloadReport = {
    agents: { created: [], updated: [], unchanged: [] },
    channels: { bound: [] },
    hands: { scheduled: [], unchanged: [] },
    problems: [...declared.problems],
  };
  const agentIds = new Map<string, string>();
  for (const { file, name, realm, config } of declared.agents) {
    const key = `${realm}\u0001${name}`;
    const fields = agentFields(config);
    const hash = createHash("sha256").update(JSON.stringify(fields)).digest("hex");
    try {
      const known = await state.get<DeclaredAgent>(DECLARED_SCOPE, key);
      const alive = known
        ? await systemCall(trigger, "agent::get", { id: known.agentId }).then(
            () => true,
            () => false,
          )
        : false;
      if (known && alive) {
        agentIds.set(key, known.agentId);
        if (known.hash === hash) {
          report.agents.unchanged.push(name);
          continue;
        }
        await systemCall(trigger, "agent::update", { id: known.agentId, ...fields });
        await state.set(DECLARED_SCOPE, key, { agentId: known.agentId, hash, file });
        report.agents.updated.push(name);
        continue;
      }
      const made = await createOrAdopt(trigger, name, realm, fields);
      await state.set(DECLARED_SCOPE, key, { agentId: made.id, hash, file });
      agentIds.set(key, made.id);
      report.agents[made.adopted ? "updated" : "created"].push(name);
    } catch (error) {
      report.problems.push({ file, message: error instanceof Error ? error.message : String(error) });
    }
  }
  for (const { file, config } of declared.channels) {
    try {
      const agentId = await resolveAgentId(
        state,
        trigger,
        config.realm ?? "realm-default",
        config.agent,
        agentIds,
      ).catch((error: Error) => {
        throw new Error(`agent: ${error.message}`);
      });
      await systemCall(trigger, "channel::bind", {
        platform: config.platform,
        channelId: config.channel_id,
        agentId,
      });
      report.channels.bound.push(`${config.platform}:${config.channel_id}`);
    } catch (error) {
      report.problems.push({ file, message: error instanceof Error ? error.message : String(error) });
    }
  }
  for (const hand of declared.hands) await applyHand(state, trigger, hand, agentIds, report);
  return report;
}

/** Which schedule each hand made (`<realm>\u0001<hand name>`), so a reload replaces rather than adds. */
export const HANDS_SCOPE = "config_hands";

async function applyHand(
  state: StateClient,
  trigger: TriggerFn,
  { file, name, config }: Declared["hands"][number],
  agentIds: Map<string, string>,
  report: ReloadReport,
): Promise<void> {
  const realmId = config.realm ?? "realm-default";
  let agentId: string;
  try {
    agentId = await resolveAgentId(state, trigger, realmId, config.agent, agentIds);
  } catch (error) {
    report.problems.push({ file, message: `agent: ${(error as Error).message}` });
    return;
  }
  const key = `${realmId}\u0001${name}`;
  const hash = createHash("sha256")
    .update(JSON.stringify({ ...config, agentId }))
    .digest("hex");
  const known = await state.get<{ hash: string; jobId?: string; agentId: string }>(HANDS_SCOPE, key);
  if (known?.hash === hash) {
    report.hands.unchanged.push(name);
    return;
  }
  // The agent's own tool call, so the job is the agent's and fires as it (its realm, its session).
  const asAgent = agentPrincipal({ id: agentId, realmId });
  try {
    if (known?.jobId) {
      await trigger({
        function_id: "tool::cron_delete",
        payload: { agentId: known.agentId, jobId: known.jobId },
        auth: agentPrincipal({ id: known.agentId, realmId }),
      }).catch(() => undefined);
    }
    let jobId: string | undefined;
    if (config.steps) {
      jobId = await scheduleHandWorkflow(state, trigger, { name, realmId, agentId, agentIds, config });
    } else if (config.task) {
      const created = await call(
        trigger,
        "tool::cron_create",
        { agentId, schedule: config.schedule, message: config.task, name },
        { auth: asAgent },
      );
      jobId = created.job.id;
    } else {
      await trigger({
        function_id: "pulse::register",
        payload: { realmId, agentId, cron: config.schedule },
        auth: systemPrincipal,
      });
    }
    await state.set(HANDS_SCOPE, key, { hash, jobId, agentId, file });
    report.hands.scheduled.push(name);
  } catch (error) {
    report.problems.push({ file, message: error instanceof Error ? error.message : String(error) });
  }
}

/** A hand that names steps: its workflow (`hand-<name>`, created or updated) on a recurring job. */
async function scheduleHandWorkflow(
  state: StateClient,
  trigger: TriggerFn,
  hand: { name: string; realmId: string; agentId: string; agentIds: Map<string, string>; config: HandFile },
): Promise<string> {
  const { name, realmId, config } = hand;
  const steps = [];
  for (const [index, step] of (config.steps ?? []).entries()) {
    const id = await resolveAgentId(state, trigger, realmId, step.agent, hand.agentIds).catch(
      (error: Error) => {
        throw new Error(`steps.${index}.agent: ${error.message}`);
      },
    );
    steps.push({ ...step, agentId: id });
  }
  const workflowId = `hand-${name.replace(/[^A-Za-z0-9_-]/g, "-")}`.slice(0, 128);
  const definition = {
    realmId,
    name: `Hand ${name}`,
    steps: agentChatSteps(steps, (step) => ({ agentId: step.agentId })),
  };
  await systemCall(trigger, "workflow::create", { id: workflowId, ...definition }).catch(async (error) => {
    if (!isAppError(error) || error.code !== "conflict") throw error;
    await systemCall(trigger, "workflow::update", { id: workflowId, ...definition });
  });
  const { job } = await systemCall(trigger, "tools::schedule_workflow", {
    agentId: hand.agentId,
    workflowId,
    schedule: config.schedule,
    input: config.task ?? "",
    name,
  });
  return job.id;
}

/**
 * Creates the declared agent, or takes over the realm's agent of that name (made over the API, by a
 * migration, or by a reload running at the same time, whose create won the name): a file and an agent
 * of the same name are the same agent, never a duplicate-name problem.
 */
async function createOrAdopt(
  trigger: TriggerFn,
  name: string,
  realmId: string,
  fields: ReturnType<typeof agentFields>,
): Promise<{ id: string; adopted: boolean }> {
  const adopt = async (id: string) => {
    await systemCall(trigger, "agent::update", { id, ...fields });
    return { id, adopted: true };
  };
  const existing = await agentByName(trigger, realmId, name);
  if (existing) return adopt(existing);
  try {
    const { id } = await systemCall(trigger, "agent::create", { name, realmId, ...fields });
    return { id, adopted: false };
  } catch (error) {
    if (!isAppError(error) || error.code !== "conflict") throw error;
    // The winner claimed the name first and writes its agent just after: give it a moment to appear.
    for (let attempt = 0; attempt < 20; attempt++) {
      const winner = await agentByName(trigger, realmId, name);
      if (winner) return adopt(winner);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw error;
  }
}
