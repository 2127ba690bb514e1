import { afterEach, describe, expect, it } from "vitest";
import type { Engine } from "../../../src/engine/engine.ts";
import { AppError } from "../../../src/shared/errors.ts";
import { eventually } from "../../helpers/iii.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

/**
 * A vote whose write landed counted, whatever fails after it: the deciding voter is told so (not given
 * an error to retry into "votes are closed"), the same vote sent again is answered as counted, and an
 * effect that ran but whose outcome could not be written is recorded applied, not interrupted.
 */

// biome-ignore lint/suspicious/noExplicitAny: answers of several functions, checked by the assertions.
type Answer = any;

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const triggerOf = (engine: Engine) => (function_id: string, payload: unknown) =>
  engine.trigger({ function_id, payload }) as Promise<Answer>;

/** A realm without council members (an admin decides alone, with one vote) and a proposal of it. */
async function proposalIn(engine: Engine, kind: string, payload: Record<string, unknown>) {
  const trigger = triggerOf(engine);
  const realm = await trigger("realm::create", { name: `vote-${kind}`, owner: "ops@acme.test" });
  const submitted = await trigger("council::submit", {
    realmId: realm.id,
    kind,
    title: "t",
    requestedBy: "op",
    payload,
  });
  return { realmId: realm.id as string, id: submitted.id as string };
}

/** `function_id` fails once for the calls `matches` picks, from now on; the others go through. */
function failOnce(engine: Engine, functionId: string, matches: (input: Answer) => boolean): void {
  const original = engine.functions.get(functionId);
  if (!original) throw new Error(`no ${functionId}`);
  let failed = false;
  engine.worker(`fail-${functionId}`).registerFunction({ id: functionId }, async (input, context) => {
    if (!failed && matches(input)) {
      failed = true;
      throw new AppError("unavailable", "the storage went away");
    }
    return original.handler(input, context);
  });
}

describe("a deciding vote that fails after its write", () => {
  it("answers that it counted, with the effect left pending, and the same vote again says so", async () => {
    server = await startTestServer();
    const { engine } = server.service;
    const trigger = triggerOf(engine);
    const { realmId, id } = await proposalIn(engine, "budget_change", { agentId: "cto", monthlyCents: 300 });
    // The vote's log entry is appended after the approving write: that append fails.
    failOnce(engine, "state::set", (input) => input.scope === "council_activity");
    const vote = { realmId, id, voterId: "operator", vote: "for" };
    const answer = await trigger("council::vote", vote);
    expect(answer).toMatchObject({ status: "approved", effect: { status: "pending" } });
    expect(answer.notice).toContain("The vote counted");
    expect(answer.notice).toContain("the storage went away");
    expect(answer.notice).toContain("the service's recovery applies it, once");

    const again = await trigger("council::vote", vote);
    expect(again).toMatchObject({ status: "approved", votes: { operator: { vote: "for" } } });
    expect(again.notice).toContain(`operator's vote "for" was already counted`);
    // Another vote on the decided proposal is still refused.
    await expect(trigger("council::vote", { ...vote, vote: "against" })).rejects.toThrow("votes are closed");
  });
});

describe("an effect that ran but whose outcome write failed", () => {
  it("is recorded applied by the next sweep, never interrupted nor run again", async () => {
    server = await startTestServer();
    const { engine } = server.service;
    const trigger = triggerOf(engine);
    const { realmId, id } = await proposalIn(engine, "strategy_change", {
      title: "Once only",
      level: "realm",
    });
    failOnce(
      engine,
      "state::set",
      (input) => input.scope === `council_proposals:${realmId}` && input.value?.effect?.status === "applied",
    );
    const answer = await trigger("council::vote", { realmId, id, voterId: "operator", vote: "for" });
    expect(answer).toMatchObject({ status: "approved", effect: { status: "applying" } });
    expect(answer.notice).toContain("The vote counted");

    await trigger("council::sweep_effects", {});
    const settled = await eventually(async () => {
      const proposal = await trigger("council::get", { realmId, id });
      return proposal.effect.status !== "applying" && proposal;
    });
    expect(settled.effect).toMatchObject({ status: "applied", functionId: "directive::create" });
    const { directives } = await trigger("directive::list", { realmId });
    expect(directives.filter((d: { title: string }) => d.title === "Once only")).toHaveLength(1);
    const log = await trigger("council::log", { realmId, order: "asc" });
    expect(log.entries.map((entry: { action: string }) => entry.action)).toEqual([
      "proposal_submitted",
      "vote_cast",
      "proposal_approved",
      "effect_applied",
    ]);
    const marks = await trigger("state::list", { scope: "council_effects", limit: 100 });
    expect(marks.items.filter(({ value }: Answer) => value.realmId === realmId)).toEqual([]);
  });
});
