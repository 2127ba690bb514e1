import { systemCall } from "../../engine/system-call.ts";
import type { TriggerFn } from "../../engine/types.ts";
import { type CostAccount, payerOf } from "../../llm/cost-event.ts";
import { effectiveEmbeddingModel, resolveEmbeddingChoice } from "../../llm/embeddings/choice.ts";
import type { EmbeddingChoice } from "../../llm/embeddings/types.ts";
import { nowMs } from "../../shared/clock.ts";
import { isFunctionNotFound } from "../../shared/errors.ts";

/** An agent whose memory is embedded: whom it is charged to, the model and its vectors' name. */
export interface EmbeddingTarget {
  agentId: string;
  realmId: string;
  /** Whom its embeddings are charged to: a sub-agent's tree's root, as its turns are. */
  payer: CostAccount;
  choice: EmbeddingChoice;
  /** The vectors' model name in the vector index: `<provider>/<model id>` (one id may live on two hosts). */
  key: string;
}

export const vectorModelKey = (choice: EmbeddingChoice): string =>
  `${choice.model.provider}/${choice.model.id}`;

/**
 * How long a looked-up agent's model is reused by stores and recalls (a flush always looks again, and an
 * agent.lifecycle event of the agent drops it at once): a recall costs no agent lookup most of the time.
 */
const TTL_MS = 10_000;

/**
 * The embedding model of an agent's memory, as its agent says now (`agent::get`, asked as the system:
 * the memory worker serves that agent's memory already) resolved by the catalog. null: no agent (or one
 * being deleted), or no model (its own `embeddingModel` nor AGENTOS_EMBEDDING_MODEL): text only.
 * A failed lookup throws (the agents worker or the catalog away): callers decide what that means.
 */
export class AgentEmbeddings {
  private readonly cache = new Map<string, { at: number; target: Promise<EmbeddingTarget | null> }>();
  private readonly trigger: TriggerFn;
  private readonly env: NodeJS.ProcessEnv;

  constructor(trigger: TriggerFn, env: NodeJS.ProcessEnv) {
    this.trigger = trigger;
    this.env = env;
  }

  /** The target as looked up within the last TTL_MS (stores and recalls). */
  of(agentId: string): Promise<EmbeddingTarget | null> {
    const cached = this.cache.get(agentId);
    if (cached && nowMs() - cached.at < TTL_MS) return cached.target;
    return this.fresh(agentId);
  }

  /** The target as the agent says now (the queue, at each flush). */
  fresh(agentId: string): Promise<EmbeddingTarget | null> {
    const target = this.lookUp(agentId);
    this.cache.set(agentId, { at: nowMs(), target });
    target.catch(() => this.cache.delete(agentId));
    if (this.cache.size > 10_000) this.cache.delete(this.cache.keys().next().value as string);
    return target;
  }

  forget(agentId: string): void {
    this.cache.delete(agentId);
  }

  private async lookUp(agentId: string): Promise<EmbeddingTarget | null> {
    let agent: {
      realmId: string;
      status: string;
      embeddingModel?: string | null;
      metadata?: Record<string, unknown> | null;
    };
    try {
      agent = await systemCall(this.trigger, "agent::get", { id: agentId });
    } catch (error) {
      if ((error as { code?: string }).code === "not_found" || isFunctionNotFound(error)) return null;
      throw error;
    }
    if (agent.status === "deleting") return null;
    const model = effectiveEmbeddingModel(agent, this.env);
    if (!model) return null;
    const choice = await resolveEmbeddingChoice(this.trigger, model);
    const payer = payerOf({ id: agentId, realmId: agent.realmId, metadata: agent.metadata });
    return { agentId, realmId: agent.realmId, payer, choice, key: vectorModelKey(choice) };
  }
}
