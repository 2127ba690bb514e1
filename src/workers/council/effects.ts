import { hostname } from "node:os";
import { call } from "../../engine/call.ts";
import { DEFAULT_TIMEOUT_MS } from "../../engine/engine.ts";
import { type Principal, systemPrincipal, type TriggerFn } from "../../engine/types.ts";
import { isPrivileged } from "../../shared/access.ts";
import { nowIso } from "../../shared/clock.ts";
import { badRequest, forbidden, isAppError } from "../../shared/errors.ts";
import { isJsonObject } from "../../shared/json-object.ts";
import { requireAgentInRealm, requireRealm } from "../../shared/realm-refs.ts";
import { inputSchemaOf, payloadProblem } from "../../shared/schema-check.ts";
import { HIRED_BY } from "./probe.ts";
import type { Effect, Proposal, SubmitInput } from "./schema.ts";
import type { EffectMark } from "./store.ts";

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
  proposal: Pick<Proposal, "kind" | "payload" | "realmId" | "submittedBy"> & { id?: string },
): EffectCall | null {
  const payload = proposal.payload ?? {};
  const { realmId, submittedBy: auth } = proposal;
  switch (proposal.kind) {
    case "budget_change":
      return { functionId: "ledger::set_budget", payload: { ...payload, realmId }, auth };
    case "hire_agent": {
      // The agent carries the proposal's id, written with it: recovery finds the hire by it (probe.ts).
      const metadata = isJsonObject(payload.metadata) ? payload.metadata : {};
      const mark = proposal.id === undefined ? {} : { [HIRED_BY]: proposal.id };
      return {
        functionId: "agent::create",
        payload: { ...payload, realmId, metadata: { ...metadata, ...mark } },
        auth,
      };
    }
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

/**
 * Applies the effect (the caller holds its claim: see claimedEffect) and says what happened. The realm
 * is read now, not as the vote saw it: an effect recovered later must not act in a realm archived or
 * being deleted since.
 */
export async function applyEffect(trigger: TriggerFn, proposal: Proposal): Promise<Effect> {
  const effect = effectCall(proposal);
  if (!effect) return { status: "none", at: nowIso() };
  try {
    await requireRealm(trigger, proposal.realmId, { write: true });
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

/** Who claims an effect in this process, as the proposal shows it. */
const CLAIMANT = `${hostname()}:${process.pid}`;

/**
 * An approved effect not yet claimed this long is taken by the sweep: its voter got this far and
 * failed (a log append), or its process died. Shorter waits would race a voter still on its way.
 */
export const PENDING_GRACE_MS = 30_000;
/**
 * A claim older than this is one whose process stopped mid-effect: the effect's call itself gives up
 * after DEFAULT_TIMEOUT_MS, and its claimant then records an outcome at once.
 */
export const APPLYING_BOUND_MS = 2 * DEFAULT_TIMEOUT_MS;

const olderThan = (at: string | undefined, bound: number, now: number) =>
  at === undefined || Date.parse(at) <= now - bound;

/**
 * The proposal with its pending effect claimed (pending → applying, by this process, now), or
 * undefined when it is not pending: taken through a compare-and-swap, only one claimant ever applies it.
 */
export function claimedEffect(proposal: Proposal, at: string): Proposal | undefined {
  if (proposal.status !== "approved" || proposal.effect?.status !== "pending") return undefined;
  const functionId = effectCall(proposal)?.functionId;
  return {
    ...proposal,
    effect: { status: "applying", ...(functionId ? { functionId } : {}), claimedBy: CLAIMANT, claimedAt: at },
    updatedAt: at,
    version: proposal.version + 1,
  };
}

/**
 * The claimant's outcome recorded, keeping who claimed it and when. Also over `interrupted`: a claimant
 * that outlived APPLYING_BOUND_MS knows better than the sweep that gave up on it.
 */
export function withOutcome(proposal: Proposal, outcome: Effect, at: string): Proposal | undefined {
  const claim = proposal.effect;
  if (claim?.status !== "applying" && claim?.status !== "interrupted") return undefined;
  return {
    ...proposal,
    effect: { ...outcome, claimedBy: claim.claimedBy, claimedAt: claim.claimedAt },
    updatedAt: at,
    version: proposal.version + 1,
  };
}

/**
 * A claim past APPLYING_BOUND_MS marked `interrupted`: whether the effect took hold is unknown, and
 * running it again could hire or spend twice, so a person checks and resubmits. Undefined otherwise.
 */
export function interruptedEffect(proposal: Proposal, now: number, at: string): Proposal | undefined {
  const claim = proposal.effect;
  if (claim?.status !== "applying" || !olderThan(claim.claimedAt, APPLYING_BOUND_MS, now)) return undefined;
  const what = claim.functionId ?? "the effect";
  return {
    ...proposal,
    effect: {
      ...claim,
      status: "interrupted",
      error: `${what}: the service stopped while applying it (claimed by ${claim.claimedBy ?? "an unknown process"} at ${claim.claimedAt ?? "an unknown time"}), so whether it took effect is unknown and it is not run again: check and resubmit`,
      at,
    },
    updatedAt: at,
    version: proposal.version + 1,
  };
}

/**
 * What the sweep does with a marked proposal: `settle` (claim and apply a pending effect: any at a
 * start, `all`, else one past PENDING_GRACE_MS), `interrupt` a claim past its bound, `drop` the mark of
 * an effect with an outcome (or of a vote that marked it and never wrote its approval), or `wait`.
 */
export function recoveryOf(
  proposal: Proposal | null,
  mark: EffectMark,
  now: number,
  all: boolean,
): "settle" | "interrupt" | "drop" | "wait" {
  if (!proposal) return "drop";
  if (proposal.status === "pending") return now - mark.at > PENDING_GRACE_MS ? "drop" : "wait";
  const status = proposal.status === "approved" ? proposal.effect?.status : undefined;
  if (status === "pending") {
    return all || olderThan(proposal.decidedAt, PENDING_GRACE_MS, now) ? "settle" : "wait";
  }
  if (status === "applying") {
    return olderThan(proposal.effect?.claimedAt, APPLYING_BOUND_MS, now) ? "interrupt" : "wait";
  }
  return "drop";
}
