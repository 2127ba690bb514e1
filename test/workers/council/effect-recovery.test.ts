import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Engine } from "../../../src/engine/engine.ts";
import { AppError } from "../../../src/shared/errors.ts";
import { findTestPostgres } from "../../engine/state/contract.ts";
import { startCluster } from "../../helpers/cluster.ts";
import { markRealmDeleting } from "../../helpers/control-plane.ts";
import { eventually } from "../../helpers/iii.ts";
import { startTestServer } from "../../helpers/server.ts";

/**
 * An approved proposal's effect left `pending` by a deciding vote that failed after the approval (or a
 * process that died there) is applied later, at most once; one whose claimant died mid-effect is
 * reported `interrupted`, never run again.
 */

// biome-ignore lint/suspicious/noExplicitAny: answers of several functions, checked by the assertions.
type Answer = any;
type Trigger = (function_id: string, payload: unknown) => Promise<Answer>;

const triggerOf =
  (engine: Engine): Trigger =>
  (function_id, payload) =>
    engine.trigger({ function_id, payload }) as Promise<Answer>;

const HOUR = 3600_000;

/**
 * realm::get fails once for the realm, on the second read from now: a vote reads the realm before its
 * write, then again to append its log entry right after the approving write. So that append fails.
 */
function failAppendAfterApproval(engine: Engine, realmId: string): void {
  const original = engine.functions.get("realm::get");
  if (!original) throw new Error("no realm worker");
  let reads = 0;
  engine.worker(`fail-${realmId}`).registerFunction({ id: "realm::get" }, async (input, context) => {
    if ((input as { id?: string }).id === realmId && ++reads === 2) {
      throw new AppError("unavailable", "the storage went away");
    }
    return original.handler(input, context);
  });
}

/** A proposal approved by a vote whose next step failed: approved, its effect still pending. */
async function strandedProposal(
  engine: Engine,
  kind: string,
  payload: Record<string, unknown>,
): Promise<{ realmId: string; id: string }> {
  const trigger = triggerOf(engine);
  const realm = await trigger("realm::create", { name: `stranded-${kind}`, owner: "ops@acme.test" });
  const realmId: string = realm.id;
  // No council members: the service (an admin) decides alone, with one vote.
  const submitted = await trigger("council::submit", {
    realmId,
    kind,
    title: "t",
    requestedBy: "op",
    payload,
  });
  failAppendAfterApproval(engine, realmId);
  // The vote counted: it says so rather than fail, and leaves the effect to the recovery sweep.
  const voted = await trigger("council::vote", {
    realmId,
    id: submitted.id,
    voterId: "operator",
    vote: "for",
  });
  expect(voted).toMatchObject({ status: "approved", effect: { status: "pending" } });
  expect(voted.notice).toContain("the storage went away");
  const stored = await trigger("council::get", { realmId, id: submitted.id });
  expect(stored).toMatchObject({ status: "approved", effect: { status: "pending" } });
  return { realmId, id: submitted.id };
}

/** Rewrites the stored proposal as a process that stopped long ago left it. */
async function rewrite(engine: Engine, realmId: string, id: string, change: (proposal: Answer) => Answer) {
  const trigger = triggerOf(engine);
  const scope = `council_proposals:${realmId}`;
  const stored = await trigger("state::get", { scope, key: id });
  await trigger("state::set", { scope, key: id, value: change(stored) });
}

const longAgo = () => new Date(Date.now() - HOUR).toISOString();
const sweep = (engine: Engine) => triggerOf(engine)("council::sweep_effects", {});
const proposalOf = (engine: Engine, realmId: string, id: string) =>
  triggerOf(engine)("council::get", { realmId, id });
const actions = async (engine: Engine, realmId: string): Promise<string[]> =>
  (await triggerOf(engine)("council::log", { realmId, order: "asc" })).entries.map(
    (entry: { action: string }) => entry.action,
  );
async function agentsNamed(engine: Engine, realmId: string, name: string): Promise<number> {
  const { agents } = await triggerOf(engine)("agent::list", { realmId });
  return agents.filter((agent: { name: string }) => agent.name === name).length;
}

describe("an effect its deciding vote left pending", () => {
  it("is applied at the next start, and its outcome recorded", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "agentos-council-"));
    try {
      const first = await startTestServer({}, { dataDir });
      let stranded: { realmId: string; id: string };
      try {
        stranded = await strandedProposal(first.service.engine, "budget_change", {
          agentId: "cto",
          monthlyCents: 5000,
          hardLimit: true,
        });
      } finally {
        await first.close();
      }
      const { realmId, id } = stranded;
      const second = await startTestServer({}, { dataDir });
      try {
        const { engine } = second.service;
        const settled = await eventually(async () => {
          const proposal = await proposalOf(engine, realmId, id);
          return proposal.effect.status !== "pending" && proposal.effect.status !== "applying" && proposal;
        });
        expect(settled.effect).toMatchObject({
          status: "applied",
          functionId: "ledger::set_budget",
          claimedBy: expect.any(String),
          claimedAt: expect.any(String),
        });
        const check = await triggerOf(engine)("ledger::check", { realmId, agentId: "cto" });
        expect(check).toMatchObject({ allowed: true, limitCents: 5000 });
        // The outcome is written on the proposal first, then appended to the log.
        const logged = await eventually(async () => {
          const all = await actions(engine, realmId);
          return all.length === 3 && all;
        });
        expect(logged).toEqual(["proposal_submitted", "vote_cast", "effect_applied"]);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("left by a version without effect marks is found and applied at the first start", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "agentos-council-"));
    try {
      const first = await startTestServer({}, { dataDir });
      let stranded: { realmId: string; id: string };
      try {
        const { engine } = first.service;
        stranded = await strandedProposal(engine, "budget_change", { agentId: "cfo", monthlyCents: 900 });
        // As the store of a version before the marks: the approval unmarked, the marks never indexed.
        const trigger = triggerOf(engine);
        const marks = await trigger("state::list", { scope: "council_effects", limit: 100 });
        for (const { key } of marks.items) await trigger("state::delete", { scope: "council_effects", key });
        await trigger("state::delete", { scope: "council_meta", key: "effects_indexed" });
      } finally {
        await first.close();
      }
      const { realmId, id } = stranded;
      const second = await startTestServer({}, { dataDir });
      try {
        const { engine } = second.service;
        await eventually(async () => (await proposalOf(engine, realmId, id)).effect.status === "applied");
        const check = await triggerOf(engine)("ledger::check", { realmId, agentId: "cfo" });
        expect(check).toMatchObject({ limitCents: 900 });
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("of a realm being deleted is not applied, and goes with the realm", async () => {
    const server = await startTestServer();
    try {
      const { engine } = server.service;
      const trigger = triggerOf(engine);
      const { realmId, id } = await strandedProposal(engine, "strategy_change", {
        title: "Never",
        level: "realm",
      });
      await rewrite(engine, realmId, id, (proposal) => ({ ...proposal, decidedAt: longAgo() }));
      await markRealmDeleting(server, realmId);
      await sweep(engine);
      const { directives } = await trigger("directive::list", { realmId });
      expect(directives).toEqual([]);
      expect(await trigger("state::get", { scope: `council_proposals:${realmId}`, key: id })).toBeNull();
      const marks = await trigger("state::list", { scope: "council_effects", limit: 100 });
      expect(marks.items.filter(({ value }: Answer) => value.realmId === realmId)).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("is left to its voter while fresh, then taken by the sweep", async () => {
    const server = await startTestServer();
    try {
      const { engine } = server.service;
      const { realmId, id } = await strandedProposal(engine, "budget_change", {
        agentId: "cto",
        monthlyCents: 700,
      });
      await sweep(engine);
      expect((await proposalOf(engine, realmId, id)).effect.status).toBe("pending");
      await rewrite(engine, realmId, id, (proposal) => ({ ...proposal, decidedAt: longAgo() }));
      await sweep(engine);
      expect((await proposalOf(engine, realmId, id)).effect).toMatchObject({ status: "applied" });
      expect(await triggerOf(engine)("ledger::check", { realmId, agentId: "cto" })).toMatchObject({
        limitCents: 700,
      });
    } finally {
      await server.close();
    }
  });

  it("of a realm archived since is not applied: it fails naming the realm", async () => {
    const server = await startTestServer();
    try {
      const { engine } = server.service;
      const { realmId, id } = await strandedProposal(engine, "hire_agent", {
        name: "late-hire",
        model: "gpt-4o",
      });
      await triggerOf(engine)("realm::update", { id: realmId, status: "Archived" });
      await rewrite(engine, realmId, id, (proposal) => ({ ...proposal, decidedAt: longAgo() }));
      await sweep(engine);
      const { effect } = await proposalOf(engine, realmId, id);
      expect(effect).toMatchObject({ status: "failed", error: `Realm ${realmId} is archived and read-only` });
      expect(await agentsNamed(engine, realmId, "late-hire")).toBe(0);
    } finally {
      await server.close();
    }
  });

  it("whose claimant stopped mid-effect is reported interrupted, not run again", async () => {
    const server = await startTestServer();
    try {
      const { engine } = server.service;
      const { realmId, id } = await strandedProposal(engine, "hire_agent", {
        name: "maybe-hired",
        model: "gpt-4o",
      });
      const claimed = (claimedAt: string) => (proposal: Answer) => ({
        ...proposal,
        effect: { status: "applying", functionId: "agent::create", claimedBy: "gone-host:4242", claimedAt },
      });
      // A claim as fresh as a running one: its claimant may still be applying it.
      await rewrite(engine, realmId, id, claimed(new Date().toISOString()));
      await sweep(engine);
      expect((await proposalOf(engine, realmId, id)).effect.status).toBe("applying");
      await rewrite(engine, realmId, id, claimed(longAgo()));
      await sweep(engine);
      await sweep(engine);
      const { effect } = await proposalOf(engine, realmId, id);
      expect(effect).toMatchObject({
        status: "interrupted",
        functionId: "agent::create",
        claimedBy: "gone-host:4242",
        error: expect.stringContaining("the service stopped while applying"),
      });
      expect(effect.error).toContain("check and resubmit");
      expect(await agentsNamed(engine, realmId, "maybe-hired")).toBe(0);
      expect(await actions(engine, realmId)).toEqual([
        "proposal_submitted",
        "vote_cast",
        "effect_interrupted",
      ]);
    } finally {
      await server.close();
    }
  });
});

describe("an effect whose claimant stopped before writing its outcome", () => {
  const claimedLongAgo = (functionId: string) => (proposal: Answer) => ({
    ...proposal,
    effect: { status: "applying", functionId, claimedBy: "gone-host:4242", claimedAt: longAgo() },
  });

  it("is reported applied when its target carries the proposal's id (a hire), and not run again", async () => {
    const server = await startTestServer();
    try {
      const { engine } = server.service;
      const trigger = triggerOf(engine);
      const { realmId, id } = await strandedProposal(engine, "hire_agent", {
        name: "hired-then-crashed",
        model: "gpt-4o",
      });
      // The claimant's agent::create went through (as the effect makes it), then its process died.
      await rewrite(engine, realmId, id, claimedLongAgo("agent::create"));
      const { agents } = await trigger("agent::list", { realmId });
      expect(agents).toEqual([]);
      await trigger("agent::create", {
        name: "hired-then-crashed",
        model: "gpt-4o",
        realmId,
        metadata: { councilProposalId: id },
      });
      expect(await sweep(engine)).toMatchObject({ settled: 1, interrupted: 0 });
      const { effect } = await proposalOf(engine, realmId, id);
      expect(effect).toMatchObject({
        status: "applied",
        functionId: "agent::create",
        claimedBy: "gone-host:4242",
        result: { foundAtRecovery: expect.stringContaining("carries this proposal's id") },
      });
      await sweep(engine);
      expect(await agentsNamed(engine, realmId, "hired-then-crashed")).toBe(1);
      expect(await actions(engine, realmId)).toEqual(["proposal_submitted", "vote_cast", "effect_applied"]);
    } finally {
      await server.close();
    }
  });

  it("is reported applied when the realm it suspends is paused", async () => {
    const server = await startTestServer();
    try {
      const { engine } = server.service;
      const { realmId, id } = await strandedProposal(engine, "realm_suspend", {});
      await rewrite(engine, realmId, id, claimedLongAgo("realm::update"));
      await triggerOf(engine)("realm::update", { id: realmId, status: "Paused" });
      await sweep(engine);
      expect((await proposalOf(engine, realmId, id)).effect).toMatchObject({
        status: "applied",
        result: { foundAtRecovery: `realm ${realmId} is paused` },
      });
    } finally {
      await server.close();
    }
  });

  it("hires an agent that carries the proposal's id", async () => {
    const server = await startTestServer();
    try {
      const { engine } = server.service;
      const { realmId, id } = await strandedProposal(engine, "hire_agent", {
        name: "marked",
        model: "gpt-4o",
        metadata: { team: "ops" },
      });
      await rewrite(engine, realmId, id, (proposal) => ({ ...proposal, decidedAt: longAgo() }));
      await sweep(engine);
      const { agents } = await triggerOf(engine)("agent::list", { realmId });
      expect(agents.find((agent: Answer) => agent.name === "marked")?.metadata).toEqual({
        team: "ops",
        councilProposalId: id,
      });
    } finally {
      await server.close();
    }
  });
});

const postgres = await findTestPostgres();
if (postgres.url === null) console.warn(`council effect recovery: skipping PostgreSQL: ${postgres.reason}`);

/** Two appliers of each backend: one SQLite service sweeping twice at once, and two PostgreSQL nodes. */
const backends: Array<{
  name: string;
  start: () => Promise<{ engines: Engine[]; close: () => Promise<void> }>;
}> = [
  {
    name: "SQLite",
    start: async () => {
      const server = await startTestServer();
      const { engine } = server.service;
      return { engines: [engine, engine], close: () => server.close() };
    },
  },
  ...(postgres.url === null
    ? []
    : [
        {
          name: "PostgreSQL cluster",
          start: async () => {
            const cluster = await startCluster(postgres.url as string, 2, { AGENTOS_RATE_LIMITS: "off" });
            return {
              engines: cluster.nodes.map((node) => (node as { engine: Engine }).engine),
              close: () => cluster.close(),
            };
          },
        },
      ]),
];

describe.each(backends)("$name: appliers of one stranded effect", ({ start }) => {
  it("apply it once: the claim goes to one of them", async () => {
    const { engines, close } = await start();
    try {
      const [first, second] = engines as [Engine, Engine];
      // A directive create is not idempotent: each application would add one.
      const { realmId, id } = await strandedProposal(first, "strategy_change", {
        title: "Go upmarket",
        level: "realm",
      });
      await rewrite(first, realmId, id, (proposal) => ({ ...proposal, decidedAt: longAgo() }));
      await Promise.all([sweep(first), sweep(second), sweep(first), sweep(second)]);
      expect((await proposalOf(second, realmId, id)).effect).toMatchObject({
        status: "applied",
        functionId: "directive::create",
      });
      const { directives } = await triggerOf(first)("directive::list", { realmId });
      expect(directives.filter((d: { title: string }) => d.title === "Go upmarket")).toHaveLength(1);
      expect((await actions(first, realmId)).filter((action) => action.startsWith("effect_"))).toEqual([
        "effect_applied",
      ]);
    } finally {
      await close();
    }
  });
});
