import { z } from "zod";
import { call } from "../../engine/call.ts";
import { publishEvent } from "../../engine/events.ts";
import { casUpdate } from "../../engine/state/cas.ts";
import { stateClient } from "../../engine/state/client.ts";
import { type InvocationContext, systemPrincipal } from "../../engine/types.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { assertRealmAccess, isPrivileged, principalLabel, requireAdmin } from "../../shared/access.ts";
import { nowIso, nowMs } from "../../shared/clock.ts";
import { badRequest, conflict, forbidden, notFound, unauthorized } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { chainVerifyResult } from "../../shared/outputs.ts";
import { newestFirst, pageOf } from "../../shared/pagination.ts";
import { recheckRealm, requireRealm } from "../../shared/realm-refs.ts";
import { defaultQuorum, isExpired, withCancel } from "./decide.ts";
import { checkPayload } from "./effects.ts";
import { effectRecovery } from "./recovery.ts";
import {
  type ActivityFields,
  activityEntry,
  activityInput,
  activityPage,
  cancelInput,
  DEFAULT_EXPIRY_MS,
  logInput,
  PROPOSAL_ACTIONS,
  type Proposal,
  proposalInput,
  proposalPage,
  proposalRecord,
  proposalsInput,
  realmInput,
  submitInput,
  sweepResult,
  voteAnswer,
  voteInput,
} from "./schema.ts";
import { activityChain, entry, matchingProposals, proposalsScope, purgeCouncil } from "./store.ts";
import { castVote } from "./vote.ts";

const TOPIC = "council.proposal";

export interface CouncilOptions {
  /**
   * False for a process that uses the storage without serving it (a CLI command): it applies no effect
   * left over by another process, at start or periodically. Default true.
   */
  background?: boolean;
}

/** The council: proposals decided by the realm's council members, with effects and a hash-chained log. */
export function registerCouncil(
  worker: WorkerClient,
  options: CouncilOptions = {},
): { ready?: Promise<void> } {
  const trigger = worker.trigger.bind(worker);
  const state = stateClient(trigger);
  const publish = (data: Record<string, unknown>) => publishEvent(trigger, TOPIC, data);
  /**
   * Appends to the realm's activity chain. A realm delete that began meanwhile has purged, or will purge,
   * what it saw: the entry (and the proposal written before it) are taken back out, and the call is a 409.
   */
  const record = async (fields: ActivityFields) => {
    const appended = await activityChain(state, fields.realmId).append(fields);
    await recheckRealm(trigger, fields.realmId, () => purgeCouncil(state, fields.realmId));
    return appended;
  };

  /** Members: the realm's org-chart nodes holding the capability `council`. */
  const councilMembers = async (realmId: string): Promise<string[]> => {
    const found = await call(
      trigger,
      "hierarchy::find",
      { realmId, capability: "council" },
      { auth: systemPrincipal },
    ).catch(() => ({ matches: [] }));
    return found.matches.map((node) => node.agentId).sort();
  };

  /** A pending proposal whose time ran out is expired (recorded once, by whoever notices first). */
  const expireIfDue = async (proposal: Proposal): Promise<Proposal> => {
    if (!isExpired(proposal, nowMs())) return proposal;
    let expired = false;
    const { value } = await casUpdate<Proposal>(
      state,
      proposalsScope(proposal.realmId),
      proposal.id,
      ({ value }) => {
        if (!value || !isExpired(value, nowMs())) return undefined;
        expired = true;
        return {
          ...value,
          status: "expired",
          decidedAt: nowIso(),
          updatedAt: nowIso(),
          version: value.version + 1,
        };
      },
    );
    if (expired) {
      await record(entry(proposal, "system", "council", "proposal_expired", { title: proposal.title }));
      publish({ type: "expired", proposalId: proposal.id, realmId: proposal.realmId });
    }
    return (value as Proposal | null) ?? proposal;
  };

  /** One proposal of the realm (expired first if its time ran out); another realm's is a 404. */
  const proposalOf = async (realmId: string, id: string): Promise<Proposal> => {
    const proposal = await state.get<Proposal>(proposalsScope(realmId), id);
    if (!proposal) throw notFound(`Proposal ${id} not found in realm ${realmId}`);
    return expireIfDue(proposal);
  };

  worker.registerFunction(
    {
      id: "council::submit",
      description: "Propose a decision to a realm's council: {realmId, kind, title, requestedBy, payload?}",
      input: submitInput,
      output: proposalRecord,
    },
    async (input, ctx) => {
      const { realmId } = input;
      assertRealmAccess(ctx, realmId);
      if (ctx.auth.kind === "anonymous") throw unauthorized("Submitting a proposal requires an API key");
      await requireRealm(trigger, realmId, { write: true });
      await checkPayload(trigger, input, realmId, ctx.auth);
      const voters = await councilMembers(realmId);
      const quorum = input.quorum ?? defaultQuorum(voters.length);
      if (voters.length > 0 && quorum > voters.length) {
        throw badRequest(`quorum ${quorum} is more than the council's ${voters.length} members`);
      }
      const now = nowIso();
      const proposal: Proposal = {
        id: newId("prp"),
        realmId,
        kind: input.kind,
        title: input.title,
        requestedBy: input.requestedBy,
        payload: input.payload ?? null,
        status: "pending",
        voters,
        quorum,
        votes: {},
        tally: { for: 0, against: 0, abstain: 0 },
        submittedBy: ctx.auth,
        expiresAt: new Date(nowMs() + (input.expiresInMs ?? DEFAULT_EXPIRY_MS)).toISOString(),
        createdAt: now,
        updatedAt: now,
        version: 1,
      };
      await state.set(proposalsScope(realmId), proposal.id, proposal, 0);
      await record(
        entry(proposal, "agent", input.requestedBy, "proposal_submitted", {
          kind: proposal.kind,
          by: principalLabel(ctx.auth),
        }),
      );
      publish({ type: "submitted", proposalId: proposal.id, realmId, kind: proposal.kind });
      return proposal;
    },
  );

  worker.registerFunction(
    {
      id: "council::vote",
      description:
        "A council member's vote (for, against, abstain; the latest counts); decides at quorum. A notice says when it counted but what follows is left to recovery, or when it was already counted",
      input: voteInput,
      output: voteAnswer,
    },
    async (input, ctx) => {
      assertRealmAccess(ctx, input.realmId);
      await requireRealm(trigger, input.realmId, { write: true });
      await proposalOf(input.realmId, input.id);
      return castVote({ state, record, decided: (proposal) => decided(proposal) }, input, ctx);
    },
  );

  /** Records the decision and settles an approved proposal's effect. */
  const decided = async (proposal: Proposal): Promise<Proposal> => {
    const action = proposal.status === "approved" ? "proposal_approved" : "proposal_rejected";
    await record(
      entry(proposal, "system", "council", action, { tally: proposal.tally, quorum: proposal.quorum }),
    );
    publish({ type: proposal.status, proposalId: proposal.id, realmId: proposal.realmId });
    return proposal.effect?.status === "pending" ? settle(proposal, false) : proposal;
  };

  const { settle, sweepEffects } = effectRecovery({ state, trigger, record, publish });

  worker.registerFunction(
    {
      id: "council::proposals",
      description: "A realm's proposals, newest first, by status and kind: {proposals, count, nextCursor}",
      input: proposalsInput,
      output: proposalPage,
    },
    async ({ realmId, status, kind, limit, cursor }, ctx) => {
      assertRealmAccess(ctx, realmId);
      await requireRealm(trigger, realmId);
      const now = nowMs();
      // A pending proposal past its time is listed as the expired one it becomes when read.
      const statusNow = (proposal: Proposal) => (isExpired(proposal, now) ? "expired" : proposal.status);
      const matching = await matchingProposals(
        state,
        realmId,
        (proposal) => (!status || statusNow(proposal) === status) && (!kind || proposal.kind === kind),
      );
      // A position of the proposal itself, not its index: a proposal submitted between two pages must
      // not shift the next page onto ones already seen.
      const page = pageOf(matching, (proposal) => newestFirst(proposal.createdAt, proposal.id), {
        limit,
        cursor,
      });
      const read = await Promise.all(
        page.items.map(({ id }) => state.get<Proposal>(proposalsScope(realmId), id)),
      );
      const proposals = await Promise.all(
        read.filter((proposal): proposal is Proposal => proposal !== null).map(expireIfDue),
      );
      return { proposals, count: matching.length, nextCursor: page.nextCursor };
    },
  );

  worker.registerFunction(
    {
      id: "council::get",
      description: "One proposal of a realm, with its votes, status and effect",
      input: proposalInput,
      output: proposalRecord,
    },
    async ({ realmId, id }, ctx) => {
      assertRealmAccess(ctx, realmId);
      await requireRealm(trigger, realmId);
      return proposalOf(realmId, id);
    },
  );

  worker.registerFunction(
    {
      id: "council::cancel",
      description:
        "Cancel a pending proposal (the key that submitted it, or an admin key): votes close and it has no effect",
      input: cancelInput,
      output: proposalRecord,
    },
    async ({ realmId, id, reason }, ctx) => {
      assertRealmAccess(ctx, realmId);
      await requireRealm(trigger, realmId, { write: true });
      await proposalOf(realmId, id);
      const { value } = await casUpdate<Proposal>(state, proposalsScope(realmId), id, ({ value: stored }) => {
        if (!stored) throw notFound(`Proposal ${id} not found in realm ${realmId}`);
        return withCancel(stored, ctx.auth, reason, nowIso());
      });
      const proposal = value as Proposal;
      const actorKind = ctx.auth.kind === "system" ? "system" : "human";
      await record(
        entry(proposal, actorKind, principalLabel(ctx.auth), "proposal_cancelled", {
          ...(reason ? { reason } : {}),
        }),
      );
      publish({ type: "cancelled", proposalId: id, realmId });
      return proposal;
    },
  );

  worker.registerFunction(
    {
      id: "council::activity",
      description: "Append an entry to a realm's hash-chained activity log: the entry with hash and prevHash",
      input: activityInput,
      output: activityEntry,
    },
    async (input, ctx) => {
      assertRealmAccess(ctx, input.realmId);
      // The service's own entries (ledger refusals, decisions, votes) cannot be forged by a realm's key.
      if (input.actorKind === "system" && !isPrivileged(ctx.auth)) {
        throw forbidden("actorKind system is the service's: a realm key records agent or human activity");
      }
      if (isProposalAction(input.action) && !isPrivileged(ctx.auth)) {
        throw forbidden(
          `action ${input.action} is the council's own record of a proposal: a realm key records other activity`,
        );
      }
      const realm = await requireRealm(trigger, input.realmId);
      if (realm?.deleting) throw conflict(`Realm ${input.realmId} is being deleted`);
      return record(input);
    },
  );

  worker.registerFunction(
    {
      id: "council::log",
      description: "A realm's activity log, newest first by default: {entries, nextCursor}",
      input: logInput,
      output: activityPage,
    },
    async ({ realmId, order, limit, cursor }, ctx) => {
      assertRealmAccess(ctx, realmId);
      await requireRealm(trigger, realmId);
      return activityChain(state, realmId).read({ order, limit, cursor });
    },
  );

  worker.registerFunction(
    {
      id: "council::verify",
      description: "Check a realm's activity chain: {valid, length, brokenAt} (edits, deletions, reordering)",
      input: realmInput,
      output: chainVerifyResult,
    },
    async ({ realmId }, ctx) => {
      assertRealmAccess(ctx, realmId);
      await requireRealm(trigger, realmId);
      return activityChain(state, realmId).verify();
    },
  );

  worker.registerFunction(
    {
      id: "council::purge_realm",
      description: "Delete a realm's proposals and activity log (part of a realm delete); idempotent",
      input: realmInput,
    },
    async ({ realmId }, ctx: InvocationContext) => {
      requireAdmin(ctx);
      return { purged: await purgeCouncil(state, realmId) };
    },
  );

  worker.registerFunction(
    {
      id: "council::sweep_effects",
      description:
        "Apply approved effects their vote left pending; report those whose process stopped mid-effect as interrupted (cron, internal)",
      input: z.object({}).passthrough(),
      output: sweepResult,
    },
    async (_input, ctx) => {
      requireAdmin(ctx);
      return sweepEffects(false);
    },
  );

  worker.registerTrigger({
    type: "subscribe",
    function_id: "council::activity",
    config: { topic: "council.audit" },
  });
  worker.registerRoute("council::submit", "POST", "/api/council/proposals", { status: 201 });
  worker.registerRoute("council::proposals", "GET", "/api/council/proposals/:realmId");
  worker.registerRoute("council::get", "GET", "/api/council/proposals/:realmId/:id");
  worker.registerRoute("council::vote", "POST", "/api/council/proposals/:realmId/:id/vote");
  worker.registerRoute("council::cancel", "POST", "/api/council/proposals/:realmId/:id/cancel");
  worker.registerRoute("council::activity", "POST", "/api/council/activity", { status: 201 });
  worker.registerRoute("council::log", "GET", "/api/council/log/:realmId");
  worker.registerRoute("council::verify", "GET", "/api/council/verify/:realmId");
  if (options.background === false) return {};
  worker.registerTrigger({
    type: "cron",
    function_id: "council::sweep_effects",
    config: { expression: "*/5 * * * * *" },
  });
  // What a stopped process approved and did not apply is applied first; if that fails now, the
  // periodic sweep takes it up.
  return {
    ready: sweepEffects(true).then(
      () => undefined,
      () => undefined,
    ),
  };
}

const isProposalAction = (action: string): boolean =>
  (PROPOSAL_ACTIONS as readonly string[]).includes(action.toLowerCase());
