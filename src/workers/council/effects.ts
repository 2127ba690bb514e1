import { call } from "../../engine/call.ts";
import { type Principal, systemPrincipal, type TriggerFn } from "../../engine/types.ts";
import { isPrivileged } from "../../shared/access.ts";
import { nowIso } from "../../shared/clock.ts";
import { badRequest, forbidden, isAppError } from "../../shared/errors.ts";
import { requireAgentInRealm } from "../../shared/realm-refs.ts";
import { inputSchemaOf, payloadProblem } from "../../shared/schema-check.ts";
import type { Effect, Proposal, SubmitInput } from "./schema.ts";

interface EffectCall {
  functionId: string;
  payload: Record<string, unknown>;
  auth: Principal;
}

/**
 * What an approved proposal does, through the owning worker's function (DESIGN §5). It runs with the
 * submitting key's rights (a realm key's council cannot do what the realm key could not: a realm-wide
 * budget stays the operator's), except `realm_suspend`, which only restricts the realm and is applied
 * by the service. `custom` proposals record a decision and do nothing.
 */
export function effectCall(
  proposal: Pick<Proposal, "kind" | "payload" | "realmId" | "submittedBy">,
): EffectCall | null {
  const payload = proposal.payload ?? {};
  const { realmId, submittedBy: auth } = proposal;
  switch (proposal.kind) {
    case "budget_change":
      return { functionId: "ledger::set_budget", payload: { ...payload, realmId }, auth };
    case "hire_agent":
      return { functionId: "agent::create", payload: { ...payload, realmId }, auth };
    case "strategy_change":
      return { functionId: "directive::create", payload: { ...payload, realmId }, auth };
    case "terminate_agent":
      return { functionId: "agent::delete", payload: { id: payload.agentId }, auth };
    case "realm_suspend":
      return {
        functionId: "realm::update",
        payload: { id: realmId, status: "Paused" },
        auth: systemPrincipal,
      };
    case "custom":
      return null;
  }
}

/**
 * At submit: the payload must be what the effect's function takes, so an approved proposal does not fail
 * for a typo weeks later (400 naming the field). A `terminate_agent` must name an agent of the realm, and
 * a realm key's `budget_change` an agent's budget: its effect runs with the key's rights, and the
 * realm-wide budget is the operator's (403 now rather than an effect that could only fail).
 */
export async function checkPayload(
  trigger: TriggerFn,
  input: SubmitInput,
  realmId: string,
  by: Principal,
): Promise<void> {
  if (input.kind === "budget_change" && input.payload?.agentId === undefined && !isPrivileged(by)) {
    throw forbidden(
      "payload.agentId: a realm key's budget_change names an agent; the realm-wide budget can only be set with an admin key",
    );
  }
  if (input.kind === "terminate_agent") {
    const agentId = input.payload?.agentId;
    if (typeof agentId !== "string" || agentId === "") {
      throw badRequest("payload.agentId: a terminate_agent proposal names the agent to delete");
    }
    await requireAgentInRealm(trigger, agentId, realmId);
    return;
  }
  const effect = effectCall({
    ...input,
    payload: input.payload ?? null,
    realmId,
    submittedBy: { kind: "system" },
  });
  if (!effect || input.kind === "realm_suspend") return;
  const info = await call(trigger, "engine::functions::info", { function_id: effect.functionId }).catch(
    () => null,
  );
  if (!info) throw badRequest(`${input.kind} proposals need ${effect.functionId}, which is not running`);
  if (!info.request_schema) return;
  const problem = payloadProblem(effect.functionId, effect.payload, inputSchemaOf(info.request_schema));
  if (problem) throw badRequest(`payload: ${problem}`);
}

/** Applies the effect once (the caller is the one whose vote approved it) and says what happened. */
export async function applyEffect(trigger: TriggerFn, proposal: Proposal): Promise<Effect> {
  const effect = effectCall(proposal);
  if (!effect) return { status: "none", at: nowIso() };
  try {
    if (proposal.kind === "terminate_agent") {
      await requireAgentInRealm(trigger, String(effect.payload.id), proposal.realmId);
    }
    const result = await trigger({
      function_id: effect.functionId,
      payload: effect.payload,
      auth: effect.auth,
    });
    return { status: "applied", functionId: effect.functionId, result: result ?? null, at: nowIso() };
  } catch (error) {
    const message = isAppError(error) || error instanceof Error ? error.message : String(error);
    return { status: "failed", functionId: effect.functionId, error: message, at: nowIso() };
  }
}
