/**
 * `agent.lifecycle`: what the agents worker publishes when an agent is created, changed or deleted
 * (after the write, fire and forget, as the system). Other workers subscribe to it with a `subscribe`
 * trigger on this topic, e.g. the memory worker to re-embed an agent's memory when its `embeddingModel`
 * changes.
 */
export const AGENT_LIFECYCLE_TOPIC = "agent.lifecycle";

export type AgentLifecycleEvent =
  | { type: "created"; agentId: string; realmId: string; embeddingModel: string | null }
  | {
      type: "updated";
      agentId: string;
      realmId: string;
      /** The fields whose stored value changed (`updatedAt` aside); an update that changed none publishes nothing. */
      changed: string[];
      /** Present when `embeddingModel` is among `changed`: the agent's own model before and after (null: none). */
      embeddingModel?: { from: string | null; to: string | null };
    }
  | { type: "deleted"; agentId: string; realmId: string };
