import { z } from "zod";
import { call } from "../../engine/call.ts";
import { publishEvent } from "../../engine/events.ts";
import { casUpdate } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import { systemPrincipal, type TriggerFn } from "../../engine/types.ts";
import { nowIso } from "../../shared/clock.ts";
import { AppError, conflict, isAppError, notFound } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";

export const approvalsScope = (agentId: string) => `tool_approvals:${agentId}`;
const POLL_MS = 200;

export const APPROVAL_STATUSES = ["pending", "approved", "denied", "expired"] as const;

export const approvalRecord = z.object({
  callId: z.string(),
  agentId: z.string(),
  realmId: z.string().optional(),
  /** In a realm with a council: the `custom` proposal its members vote on. */
  proposalId: z.string().optional(),
  functionId: z.string(),
  input: z.unknown(),
  status: z.enum(APPROVAL_STATUSES),
  createdAt: z.string(),
  decidedAt: z.string().optional(),
  decidedBy: z.string().optional(),
  reason: z.string().optional(),
});
export type Approval = z.infer<typeof approvalRecord>;
export const approvalList = z.object({ approvals: z.array(approvalRecord).describe("Oldest first") });

/**
 * Records the call as pending and waits until someone decides it (state is polled, so a decision taken on
 * any node counts) or the turn gives up. Approved: the call runs. Denied, or abandoned: an error the
 * model reads.
 */
export async function awaitApproval(
  state: StateClient,
  trigger: TriggerFn,
  call: { agentId: string; realmId: string; functionId: string; input: unknown; signal: AbortSignal },
): Promise<void> {
  const approval: Approval = {
    callId: newId("call"),
    agentId: call.agentId,
    realmId: call.realmId,
    functionId: call.functionId,
    input: call.input,
    status: "pending",
    createdAt: nowIso(),
  };
  approval.proposalId = await proposeToCouncil(trigger, approval);
  await state.set(approvalsScope(call.agentId), approval.callId, approval);
  publishEvent(trigger, "tool.approval_requested", approval);
  for (let round = 0; ; round++) {
    if (approval.proposalId && round % COUNCIL_POLL_ROUNDS === 0)
      await followCouncil(state, trigger, approval);
    if (call.signal.aborted) {
      const expired = await settle(state, call.agentId, approval.callId, {
        status: "expired",
        reason: "the turn ended first",
      }).catch(() => undefined);
      if (expired) await withdrawProposal(trigger, expired);
      throw new AppError(
        "forbidden",
        `${call.functionId} needed approval (call ${approval.callId}) and got none in time`,
      );
    }
    const current = await state.get<Approval>(approvalsScope(call.agentId), approval.callId);
    if (!current) throw new AppError("forbidden", `Approval ${approval.callId} was withdrawn`);
    if (current.status !== "pending") await withdrawProposal(trigger, current);
    if (current.status === "approved") return;
    if (current.status !== "pending") {
      throw new AppError(
        "forbidden",
        `${call.functionId} was ${current.status} by ${current.decidedBy ?? "the service"}${current.reason ? `: ${current.reason}` : ""}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** How often (in POLL_MS rounds) a waiting call looks at its council proposal. */
const COUNCIL_POLL_ROUNDS = 5;

/**
 * A realm with a council (hierarchy nodes with the capability "council") decides its agents' risky
 * calls by vote: the call becomes a `custom` proposal (DESIGN §5: it records a decision and has no
 * effect of its own); its outcome decides the call. An admin may still decide first.
 */
async function proposeToCouncil(trigger: TriggerFn, approval: Approval): Promise<string | undefined> {
  const { realmId } = approval;
  if (!realmId) return undefined;
  const found = await call(
    trigger,
    "hierarchy::find",
    { realmId, capability: "council" },
    { auth: systemPrincipal },
  ).catch(() => ({ matches: [] }));
  if (found.matches.length === 0) return undefined;
  const proposal = await call(
    trigger,
    "council::submit",
    {
      realmId,
      kind: "custom",
      title: `Approve ${approval.functionId} for agent ${approval.agentId} (call ${approval.callId})`,
      requestedBy: approval.agentId,
      payload: {
        toolApproval: {
          agentId: approval.agentId,
          callId: approval.callId,
          functionId: approval.functionId,
          input: approval.input,
        },
      },
    },
    { auth: systemPrincipal },
  );
  return proposal.id;
}

/** Settles the call as its proposal was decided (approved, or rejected, expired or cancelled). */
async function followCouncil(state: StateClient, trigger: TriggerFn, approval: Approval): Promise<void> {
  if (!approval.realmId || !approval.proposalId) return;
  const proposal = await call(
    trigger,
    "council::get",
    { realmId: approval.realmId, id: approval.proposalId },
    { auth: systemPrincipal },
  ).catch(() => undefined);
  const status = proposal?.status;
  if (!status || status === "pending") return;
  const decision = status === "approved" ? "approved" : "denied";
  await settle(state, approval.agentId, approval.callId, {
    status: decision,
    decidedBy: `council:${approval.proposalId}`,
    ...(decision === "denied" ? { reason: `the council's proposal was ${status}` } : {}),
  }).catch((error) => {
    // An admin decided first: that decision stands.
    if (!isAppError(error) || error.code !== "conflict") throw error;
  });
}

/**
 * A call decided otherwise (by a key, or expired when its turn ended) withdraws its council proposal, so
 * members are not left voting on a call that is already settled. Best effort: a proposal already
 * decided, or gone with its realm, stays as it is.
 */
async function withdrawProposal(trigger: TriggerFn, decided: Approval): Promise<void> {
  if (!decided.realmId || !decided.proposalId || decided.decidedBy?.startsWith("council:")) return;
  const by = decided.decidedBy ?? "the service";
  const why = decided.reason ? `: ${decided.reason}` : "";
  // council::cancel takes a reason of at most 2000 characters, as tools::decide does.
  const reason = `tool call ${decided.callId} was ${decided.status} by ${by}${why}`.slice(0, 2000);
  await call(
    trigger,
    "council::cancel",
    { realmId: decided.realmId, id: decided.proposalId, reason },
    { auth: systemPrincipal },
  ).catch(() => undefined);
}

/** Decides a pending call exactly once: a second decision is a 409 naming the first. */
export async function settle(
  state: StateClient,
  agentId: string,
  callId: string,
  decision: { status: Approval["status"]; reason?: string; decidedBy?: string },
): Promise<Approval> {
  const { value } = await casUpdate<Approval>(
    state,
    approvalsScope(agentId),
    callId,
    ({ value: current }) => {
      if (!current) throw notFound(`No tool call ${callId} awaits approval for agent ${agentId}`);
      if (current.status !== "pending") throw conflict(`Tool call ${callId} is already ${current.status}`);
      return { ...current, ...decision, decidedAt: nowIso() };
    },
  );
  return value as Approval;
}
