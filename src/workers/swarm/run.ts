import { call } from "../../engine/call.ts";
import type { StateClient } from "../../engine/state/client.ts";
import type { Principal, TriggerFn } from "../../engine/types.ts";
import type { Swarm, SwarmMessage } from "./schema.ts";
import { appendMessage, messagesOf } from "./store.ts";
import { consensusOf } from "./tally.ts";

/** Messages a member is shown each round: the latest, so a long swarm stays a short prompt. */
const SHOWN = 30;

export interface RunDeps {
  trigger: TriggerFn;
  state: StateClient;
  /** Who started the run: each member's turn runs as them (realm, budget and capabilities apply). */
  auth: Principal;
  /** The run's invocation: once it is stopped (timed out), no further turn starts and those running stop. */
  signal?: AbortSignal;
}

/**
 * A swarm that runs itself: each round every member agent is asked, in parallel, for its vote on the
 * goal and why (a real agent turn, in session `swarm:<id>`, with the swarm's latest messages in the
 * prompt); its answer is recorded as an observation and its vote as a vote on the goal. The run stops
 * at consensus on the goal, when the swarm ends, or after `rounds`. A member whose turn fails (over
 * budget, say) is reported and skipped for that round.
 */
export async function runSwarm(deps: RunDeps, swarm: Swarm, rounds: number) {
  const failures: Array<{ round: number; agentId: string; error: string }> = [];
  let consensus = consensusOf(swarm, await messagesOf(deps.state, swarm.swarmId), swarm.goal);
  let round = 0;
  while (round < rounds && !consensus.hasConsensus && !deps.signal?.aborted) {
    round++;
    const prompt = promptOf(swarm, await messagesOf(deps.state, swarm.swarmId));
    const answers = await Promise.all(
      swarm.agentIds.map((agentId) =>
        call(
          deps.trigger,
          "agent::chat",
          { agentId, message: prompt, sessionId: `swarm:${swarm.swarmId}` },
          { auth: deps.auth, ...(deps.signal ? { signal: deps.signal } : {}) },
        ).then(
          (reply) => ({ agentId, content: String(reply.content ?? "") }),
          (error: Error) => ({ agentId, error: error.message }),
        ),
      ),
    );
    try {
      for (const answer of answers) {
        if ("error" in answer) {
          failures.push({ round, agentId: answer.agentId, error: answer.error });
          continue;
        }
        const base = { swarmId: swarm.swarmId, agentId: answer.agentId };
        await appendMessage(deps.state, {
          ...base,
          type: "observation",
          message: answer.content || "(no answer)",
        });
        await appendMessage(deps.state, {
          ...base,
          type: "vote",
          message: swarm.goal,
          vote: voteOf(answer.content),
        });
      }
    } catch (error) {
      // The swarm ended (dissolved, expired, full) while its members were thinking.
      failures.push({ round, agentId: "*", error: (error as Error).message });
      break;
    }
    consensus = consensusOf(swarm, await messagesOf(deps.state, swarm.swarmId), swarm.goal);
  }
  return { swarmId: swarm.swarmId, rounds: round, consensus, failures };
}

function promptOf(swarm: Swarm, messages: SwarmMessage[]): string {
  const transcript = messages
    .slice(-SHOWN)
    .map((m) => `- ${m.agentId} (${m.type}${m.vote ? `: ${m.vote}` : ""}): ${m.message}`)
    .join("\n");
  return [
    `You are one of ${swarm.agentIds.length} members of swarm ${swarm.swarmId}.`,
    `Goal: ${swarm.goal}`,
    `Messages so far:\n${transcript || "(none yet)"}`,
    "Answer with your vote on the goal as the very first word — for, against or abstain — then one or two sentences on why.",
  ].join("\n\n");
}

/** The first word of an answer as a vote; anything else abstains. */
export function voteOf(answer: string): "for" | "against" | "abstain" {
  const first = answer
    .trim()
    .toLowerCase()
    .match(/^[*"'`_\s]*([a-z]+)/)?.[1];
  return first === "for" || first === "against" ? first : "abstain";
}
