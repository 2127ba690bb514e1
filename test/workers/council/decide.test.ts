import { describe, expect, it } from "vitest";
import { withVote } from "../../../src/workers/council/decide.ts";
import type { Proposal } from "../../../src/workers/council/schema.ts";

const proposal: Proposal = {
  id: "prp-1",
  realmId: "realm-1",
  kind: "custom",
  title: "t",
  requestedBy: "cfo",
  payload: null,
  status: "pending",
  voters: ["cfo"],
  quorum: 1,
  votes: {},
  tally: { for: 0, against: 0, abstain: 0 },
  submittedBy: { kind: "admin", keyId: "k" },
  expiresAt: "2026-01-01T00:00:00.000Z",
  createdAt: "2025-12-25T00:00:00.000Z",
  updatedAt: "2025-12-25T00:00:00.000Z",
  version: 1,
};

describe("withVote", () => {
  it("decides a pending proposal before its time, its effect pending until claimed", () => {
    const hire = { ...proposal, kind: "hire_agent" as const };
    const voted = withVote(hire, "cfo", "for", false, "2025-12-31T23:59:59.999Z");
    expect(voted).toMatchObject({ status: "approved", effect: { status: "pending" } });
  });

  it("settles a custom proposal's effect at once: it has nothing to apply, nor to recover", () => {
    const voted = withVote(proposal, "cfo", "for", false, "2025-12-31T23:59:59.999Z");
    expect(voted.effect).toEqual({ status: "none", at: "2025-12-31T23:59:59.999Z" });
  });

  it("takes no vote once the time ran out, even while the record still reads pending", () => {
    // A vote that read the proposal just before expiresAt writes just after it.
    expect(() => withVote(proposal, "cfo", "for", false, "2026-01-01T00:00:00.000Z")).toThrow(
      /expired at 2026-01-01T00:00:00.000Z: votes are closed/,
    );
  });
});
