import type { Swarm, SwarmMessage } from "./schema.ts";

/**
 * Consensus on a proposal (DESIGN §6): the votes whose message names it (trimmed, any case), each
 * member's latest one; abstentions count for neither side. Reached when `for` ÷ (`for` + `against`)
 * is at least the swarm's threshold, with at least one such vote.
 */
export function consensusOf(swarm: Swarm, messages: SwarmMessage[], proposal: string) {
  const wanted = proposal.trim().toLowerCase();
  const latest = new Map<string, SwarmMessage["vote"]>();
  for (const message of messages) {
    if (message.type !== "vote" || message.message.trim().toLowerCase() !== wanted) continue;
    if (swarm.agentIds.includes(message.agentId)) latest.set(message.agentId, message.vote);
  }
  let votesFor = 0;
  let votesAgainst = 0;
  for (const vote of latest.values()) {
    if (vote === "for") votesFor++;
    else if (vote === "against") votesAgainst++;
  }
  const totalVoters = votesFor + votesAgainst;
  return {
    proposal,
    hasConsensus: totalVoters > 0 && votesFor / totalVoters >= swarm.consensusThreshold,
    votesFor,
    votesAgainst,
    threshold: swarm.consensusThreshold,
    totalVoters,
  };
}

/** swarm::collect: the messages by type and by agent. */
export function collected(messages: SwarmMessage[]) {
  const agents: Record<string, SwarmMessage[]> = Object.create(null);
  for (const message of messages) {
    const own = agents[message.agentId] ?? [];
    own.push(message);
    agents[message.agentId] = own;
  }
  return {
    totalMessages: messages.length,
    observations: messages.filter((m) => m.type === "observation"),
    proposals: messages.filter((m) => m.type === "proposal"),
    votes: messages.filter((m) => m.type === "vote"),
    agents,
  };
}
