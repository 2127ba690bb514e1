import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The request metadata a workflow step's call carries: the workflows above the run it starts. The
 * engine gives it to the called function and HTTP callers cannot set it, so a nested run knows its
 * chain however it was started (sync or async) and on whichever node. Shared (not the workflow
 * worker's) because an agent's tool calls forward it: workers never import each other's internals.
 */
export const CHAIN_METADATA = "workflowChain";

/**
 * The chain of the step under way in this async context: what a step's call reaches through other
 * functions that pass no metadata on (a step calling agent::chat, whose turn's tool runs workflow::run;
 * an agent that asks another agent, whose tool does), as the agent-to-agent hops are counted. Without it
 * a workflow looping through an agent turn nested as deep as the agents' own bounds allowed.
 */
const stepChain = new AsyncLocalStorage<string[]>();

/** Runs `work` (and everything it calls in turn) under `chain`. */
export function inChain<T>(chain: string[], work: () => T): T {
  return stepChain.run(chain, work);
}

/** The chain of the step under way in this async context ([] outside any step). */
export function chainHere(): string[] {
  return stepChain.getStore() ?? [];
}

/**
 * The chain of this async context as call metadata holding the chain key alone, for a call that leaves
 * the process (an agent's tool on a remote worker has no async context of ours); undefined outside a
 * step. It can only make the depth limit stricter: the nested run takes the longer chain it is told.
 */
export function chainMetadataHere(): Record<string, unknown> | undefined {
  const chain = chainHere();
  return chain.length > 0 ? { [CHAIN_METADATA]: [...chain] } : undefined;
}
