import { call } from "../../engine/call.ts";
import { systemPrincipal, type TriggerFn } from "../../engine/types.ts";
import { nowIso } from "../../shared/clock.ts";
import type { Effect, Proposal } from "./schema.ts";

/**
 * The metadata key a hired agent carries naming the proposal that hired it: the durable mark, written
 * with the agent itself, by which recovery tells a hire that took place from one that never ran.
 */
export const HIRED_BY = "councilProposalId";

/** Agents read per page while looking for a hire's mark. */
const PAGE = 200;

/**
 * Whether an effect whose claimant stopped before writing its outcome took hold, judged from its target:
 * an agent hired under this proposal's mark, the realm paused, the agent to terminate gone. `applied`
 * (the target as the effect leaves it) or undefined: not found, or a kind whose target cannot tell
 * (a budget set to the same figure by hand, a directive like any other), which stays `interrupted` and is
 * never run again. A probe that fails tells nothing either.
 */
export async function probeEffect(trigger: TriggerFn, proposal: Proposal): Promise<Effect | undefined> {
  const functionId = proposal.effect?.functionId;
  const found = await foundOnTarget(trigger, proposal).catch(() => undefined);
  if (found === undefined) return undefined;
  return {
    status: "applied",
    ...(functionId ? { functionId } : {}),
    result: { foundAtRecovery: found },
    at: nowIso(),
  };
}

async function foundOnTarget(trigger: TriggerFn, proposal: Proposal): Promise<string | undefined> {
  const auth = { auth: systemPrincipal };
  switch (proposal.kind) {
    case "hire_agent": {
      let cursor: string | undefined;
      do {
        const page = await call(
          trigger,
          "agent::list",
          { realmId: proposal.realmId, limit: PAGE, cursor },
          auth,
        );
        const hired = page.agents.find((agent) => agent.metadata?.[HIRED_BY] === proposal.id);
        if (hired) return `agent ${hired.id} carries this proposal's id`;
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      return undefined;
    }
    case "realm_suspend": {
      const realm = await call(trigger, "realm::get", { id: proposal.realmId }, auth);
      return realm.status === "Paused" ? `realm ${proposal.realmId} is paused` : undefined;
    }
    case "terminate_agent": {
      const agentId = String(proposal.payload?.agentId ?? "");
      const gone = await call(trigger, "agent::get", { id: agentId }, auth).then(
        (agent) => agent.realmId !== proposal.realmId,
        (error: { code?: string }) => {
          if (error?.code === "not_found") return true;
          throw error;
        },
      );
      return gone ? `agent ${agentId} is gone from the realm` : undefined;
    }
    default:
      return undefined;
  }
}
