import { casUpdate } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import type { TriggerFn } from "../../engine/types.ts";
import { nowIso, nowMs } from "../../shared/clock.ts";
import { onceUntilDone } from "../../shared/once.ts";
import { applyEffect, claimedEffect, interruptedEffect, recoveryOf, withOutcome } from "./effects.ts";
import { probeEffect } from "./probe.ts";
import type { ActivityFields, Effect, Proposal } from "./schema.ts";
import {
  EFFECTS_SCOPE,
  type EffectMark,
  entry,
  indexUnsettledEffects,
  proposalsScope,
  unmarkEffect,
} from "./store.ts";

const keyOf = (proposal: Pick<Proposal, "realmId" | "id">) => `${proposal.realmId}\u0000${proposal.id}`;

export interface RecoveryDeps {
  state: StateClient;
  trigger: TriggerFn;
  /** Appends to the realm's activity chain. */
  record(fields: ActivityFields): Promise<unknown>;
  publish(data: Record<string, unknown>): void;
}

/**
 * How an approved proposal's effect is applied at most once: `settle` claims and applies it (a vote's
 * own, or the sweep's), `sweepEffects` takes up those a vote left pending or a process left mid-effect.
 */
export function effectRecovery({ state, trigger, record, publish }: RecoveryDeps) {
  /**
   * Claims the pending effect (compare-and-swap: pending → applying), applies it, records the outcome on
   * the proposal and in the log, and drops its mark. Whoever loses the claim (another vote, node or
   * sweep has it) applies nothing and gets the proposal as it is. `recovered`: the sweep's, not a vote's.
   */
  const settle = async (proposal: Proposal, recovered: boolean): Promise<Proposal> => {
    const scope = proposalsScope(proposal.realmId);
    let mine = false;
    const claim = await casUpdate<Proposal>(state, scope, proposal.id, ({ value }) => {
      const next = value ? claimedEffect(value, nowIso()) : undefined;
      mine = next !== undefined;
      return next;
    });
    const claimed = claim.value as Proposal | null;
    if (!mine || !claimed) return claimed ?? proposal;
    const effect = await applyEffect(trigger, claimed);
    // Kept until written: a failed write (the storage away a moment) is retried by the next sweep here,
    // rather than the claim read as interrupted later, as though whether it ran were unknown.
    unrecorded.set(keyOf(proposal), { proposal, effect, recovered });
    return recordOutcome(proposal, effect, recovered, claimed);
  };

  /** Outcomes this process applied and has not yet written onto their proposal, by realm and id. */
  const unrecorded = new Map<string, { proposal: Proposal; effect: Effect; recovered: boolean }>();

  /**
   * Writes the claimant's outcome onto the proposal (over `applying`, or `interrupted` if another
   * sweep gave up on it meanwhile), logs it and drops its mark. Throws if the write fails: it stays in
   * `unrecorded` for the next sweep.
   */
  const recordOutcome = async (
    proposal: Proposal,
    effect: Effect,
    recovered: boolean,
    claimed: Proposal,
  ): Promise<Proposal> => {
    const scope = proposalsScope(proposal.realmId);
    let written = false;
    const { value } = await casUpdate<Proposal>(state, scope, proposal.id, ({ value }) => {
      const next = value ? withOutcome(value, effect, nowIso()) : undefined;
      written = next !== undefined;
      return next;
    });
    unrecorded.delete(keyOf(proposal));
    // Gone with its realm, or written already: nothing more to tell.
    if (!written) return (value as Proposal | null) ?? { ...claimed, effect };
    try {
      if (effect.status !== "none") {
        const outcome = effect.status === "applied" ? "effect_applied" : "effect_failed";
        await record(
          entry(proposal, "system", "council", outcome, {
            functionId: effect.functionId,
            ...(effect.error ? { error: effect.error } : {}),
            ...(recovered ? { recovered } : {}),
          }),
        );
      }
    } finally {
      await unmarkEffect(state, proposal);
    }
    return (value as Proposal | null) ?? { ...claimed, effect };
  };

  /**
   * A claim whose process stopped mid-effect: `applied` if its target shows it took hold (probeEffect),
   * else reported `interrupted` (once) rather than run again. Says which it recorded, if either.
   */
  const interrupt = async (proposal: Proposal): Promise<"applied" | "interrupted" | undefined> => {
    const found = await probeEffect(trigger, proposal);
    if (found) {
      const recorded = await recordOutcome(proposal, found, true, proposal);
      return recorded.effect?.status === "applied" ? "applied" : undefined;
    }
    let mine = false;
    const { value } = await casUpdate<Proposal>(
      state,
      proposalsScope(proposal.realmId),
      proposal.id,
      (current) => {
        const next = current.value ? interruptedEffect(current.value, nowMs(), nowIso()) : undefined;
        mine = next !== undefined;
        return next;
      },
    );
    const interrupted = value as Proposal | null;
    if (!mine || !interrupted?.effect) return undefined;
    try {
      await record(
        entry(interrupted, "system", "council", "effect_interrupted", {
          functionId: interrupted.effect.functionId,
          error: interrupted.effect.error,
        }),
      );
      publish({ type: "effect_interrupted", proposalId: proposal.id, realmId: proposal.realmId });
    } finally {
      await unmarkEffect(state, proposal);
    }
    return "interrupted";
  };

  const indexed = onceUntilDone(() => indexUnsettledEffects(state, () => state.groups()));

  /**
   * Takes up every marked effect left without an outcome (see recoveryOf): at a start (`all`) any
   * pending one, else those its voter had PENDING_GRACE_MS to apply. One proposal's failure (its realm
   * being deleted, a storage error) leaves its mark for the next sweep and does not stop the others.
   */
  const sweepEffects = async (all: boolean) => {
    await indexed();
    for (const { proposal, effect, recovered } of [...unrecorded.values()]) {
      await recordOutcome(proposal, effect, recovered, proposal).catch(() => undefined);
    }
    const now = nowMs();
    const marks: Array<{ value: EffectMark; version: number }> = [];
    for await (const { value, version } of state.scan<EffectMark>(EFFECTS_SCOPE))
      marks.push({ value, version });
    const swept = { settled: 0, interrupted: 0, dropped: 0 };
    for (const { value: mark, version } of marks) {
      try {
        const proposal = await state.get<Proposal>(proposalsScope(mark.realmId), mark.id);
        const step = recoveryOf(proposal, mark, now, all);
        if (step === "drop") {
          await unmarkEffect(state, mark, version);
          swept.dropped++;
        } else if (step === "settle" && proposal) {
          const settled = await settle(proposal, true);
          if (settled.effect?.status !== "pending" && settled.effect?.status !== "applying") swept.settled++;
        } else if (step === "interrupt" && proposal) {
          const outcome = await interrupt(proposal);
          if (outcome === "interrupted") swept.interrupted++;
          if (outcome === "applied") swept.settled++;
        }
      } catch {
        // Left for the next sweep (see above).
      }
    }
    return swept;
  };

  return { settle, sweepEffects };
}
