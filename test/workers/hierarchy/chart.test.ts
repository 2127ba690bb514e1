import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AppError } from "../../../src/shared/errors.ts";
import {
  buildForest,
  buildSubtree,
  type Chart,
  chainOf,
  emptyChart,
  findByCapability,
  MAX_DEPTH,
  type NodeChanges,
  removeNode,
  setNode,
} from "../../../src/workers/hierarchy/chart.ts";
import type { TreeNode } from "../../../src/workers/hierarchy/schema.ts";

const REALM = "realm-x";
const AGENTS = ["a", "b", "c", "d", "e", "f"];

/** Applies sets in order (each must be accepted). */
function chartOf(...sets: Array<[string, NodeChanges]>): Chart {
  return sets.reduce(
    (chart, [agentId, changes]) => setNode(chart, REALM, agentId, changes).chart,
    emptyChart(),
  );
}

function flatten(trees: TreeNode[]): string[] {
  return trees.flatMap((tree) => [tree.agentId, ...flatten(tree.reports)]);
}

/** Walks up from every node: each must reach a root through existing nodes within n steps (no loop, no dangling). */
function assertForest(chart: Chart): void {
  const nodes = Object.values(chart.nodes);
  for (const node of nodes) {
    let current = node;
    for (let steps = 0; current.reportsTo !== null; steps++) {
      expect(steps).toBeLessThan(nodes.length);
      const manager = chart.nodes[current.reportsTo];
      expect(manager, `${current.agentId} reports to missing ${current.reportsTo}`).toBeDefined();
      current = manager;
    }
  }
}

describe("chart rules", () => {
  it("gives a new node defaults and merges later sets into it", () => {
    const first = setNode(emptyChart(), REALM, "a", {});
    expect(first.node).toEqual({
      realmId: REALM,
      agentId: "a",
      reportsTo: null,
      title: "",
      capabilities: [],
      rank: 1,
    });
    const chart = chartOf(
      ["boss", {}],
      ["a", { reportsTo: "boss", title: "Dev", capabilities: ["code"], rank: 3 }],
    );
    const merged = setNode(chart, REALM, "a", { title: "Lead" }).node;
    expect(merged).toEqual({
      realmId: REALM,
      agentId: "a",
      reportsTo: "boss",
      title: "Lead",
      capabilities: ["code"],
      rank: 3,
    });
    expect(setNode(chart, REALM, "a", { reportsTo: null }).node.reportsTo).toBeNull();
  });

  it("refuses self-report, unknown managers and cycles, naming the loop", () => {
    const chart = chartOf(["a", {}], ["b", { reportsTo: "a" }], ["c", { reportsTo: "b" }]);
    expect(() => setNode(chart, REALM, "a", { reportsTo: "a" })).toThrow("agent cannot report to itself");
    expect(() => setNode(chart, REALM, "a", { reportsTo: "z" })).toThrow(
      `manager z is not in the hierarchy of realm ${REALM}`,
    );
    expect(() => setNode(chart, REALM, "a", { reportsTo: "c" })).toThrow(
      "cycle detected in hierarchy: a -> c -> b -> a",
    );
  });

  it("re-parents the reports of a removed node to its manager, or makes them roots", () => {
    const chart = chartOf(
      ["a", {}],
      ["b", { reportsTo: "a" }],
      ["c", { reportsTo: "b" }],
      ["d", { reportsTo: "b" }],
    );
    const withoutB = removeNode(chart, REALM, "b");
    expect(withoutB.nodes.c?.reportsTo).toBe("a");
    expect(withoutB.nodes.d?.reportsTo).toBe("a");
    const withoutA = removeNode(chart, REALM, "a");
    expect(withoutA.nodes.b?.reportsTo).toBeNull();
    expect(() => removeNode(chart, REALM, "z")).toThrow(`Agent z is not in the hierarchy of realm ${REALM}`);
  });

  it("keeps a node whose id is __proto__ when another node is removed", () => {
    const chart = chartOf(["__proto__", {}], ["b", { reportsTo: "__proto__" }], ["c", {}]);
    const withoutC = removeNode(chart, REALM, "c");
    expect(Object.keys(withoutC.nodes).sort()).toEqual(["__proto__", "b"]);
    expect(Object.getPrototypeOf(withoutC.nodes)).toBe(Object.prototype);
    expect(chainOf(withoutC, "b").map((node) => node.agentId)).toEqual(["b", "__proto__"]);
    expect(Object.keys(JSON.parse(JSON.stringify(withoutC)).nodes).sort()).toEqual(["__proto__", "b"]);
  });

  it(`refuses a chain of command deeper than ${MAX_DEPTH}, also when a subtree moves under a deep node`, () => {
    let chart = emptyChart();
    for (let i = 0; i < MAX_DEPTH; i++)
      chart = setNode(chart, REALM, `n${i}`, { reportsTo: i ? `n${i - 1}` : null }).chart;
    expect(chainOf(chart, `n${MAX_DEPTH - 1}`)).toHaveLength(MAX_DEPTH);
    expect(() => setNode(chart, REALM, "one-more", { reportsTo: `n${MAX_DEPTH - 1}` })).toThrow(
      `a chain of command is at most ${MAX_DEPTH} deep`,
    );
    // A root with one report moved under the node at depth MAX_DEPTH - 1 would reach MAX_DEPTH + 1.
    chart = setNode(setNode(chart, REALM, "r", {}).chart, REALM, "r2", { reportsTo: "r" }).chart;
    expect(() => setNode(chart, REALM, "r", { reportsTo: `n${MAX_DEPTH - 2}` })).toThrow(/would make it 101/);
    expect(setNode(chart, REALM, "r", { reportsTo: `n${MAX_DEPTH - 3}` }).node.reportsTo).toBe(
      `n${MAX_DEPTH - 3}`,
    );
  });

  it("orders reports by rank, then agentId, and finds capabilities whole and in any case", () => {
    const chart = chartOf(
      ["root", {}],
      ["z", { reportsTo: "root", rank: 1, capabilities: ["Sales"] }],
      ["y", { reportsTo: "root", rank: 2, capabilities: ["pre-sales"] }],
      ["x", { reportsTo: "root", rank: 1, capabilities: ["SALES", "code"] }],
    );
    expect(buildForest(chart)[0]?.reports.map((node) => node.agentId)).toEqual(["x", "z", "y"]);
    expect(findByCapability(chart, "sales").map((node) => node.agentId)).toEqual(["x", "z"]);
    expect(findByCapability(chart, "sale")).toEqual([]);
  });

  it("shows every node once even in a chart broken by hand (dangling manager, loop)", () => {
    const node = (agentId: string, reportsTo: string | null) => ({
      realmId: REALM,
      agentId,
      reportsTo,
      title: "",
      capabilities: [],
      rank: 1,
    });
    const broken: Chart = {
      nodes: { a: node("a", "gone"), b: node("b", "a"), c: node("c", "d"), d: node("d", "c") },
    };
    const forest = buildForest(broken);
    expect(flatten(forest).sort()).toEqual(["a", "b", "c", "d"]);
    expect(forest.map((tree) => tree.agentId)).toEqual(["a", "c"]);
    expect(chainOf(broken, "c").map((n) => n.agentId)).toEqual(["c", "d"]);
    expect(flatten([buildSubtree(broken, REALM, "c")])).toEqual(["c", "d"]);
    // A new set under the loop still terminates.
    expect(setNode(broken, REALM, "e", { reportsTo: "c" }).node.reportsTo).toBe("c");
  });
});

type Op =
  | { kind: "set"; agentId: string; reportsTo: string | null | undefined; rank: number | undefined }
  | { kind: "delete"; agentId: string };

const agentArb = fc.constantFrom(...AGENTS);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("set" as const),
      agentId: agentArb,
      reportsTo: fc.option(fc.option(agentArb, { nil: null }), { nil: undefined }),
      rank: fc.option(fc.nat(5), { nil: undefined }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("delete" as const), agentId: agentArb }) },
);

/** Whether `managerId` is `agentId` or reports (directly or not) to it, by an independent walk. */
function wouldLoop(chart: Chart, agentId: string, managerId: string): boolean {
  for (
    let current: string | null = managerId;
    current !== null;
    current = chart.nodes[current]?.reportsTo ?? null
  ) {
    if (current === agentId) return true;
  }
  return false;
}

describe("chart properties", () => {
  it("any sequence of sets and deletes keeps a forest where every node is reachable from a root", () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 60 }), (ops) => {
        let chart = emptyChart();
        for (const op of ops) {
          if (op.kind === "delete") {
            if (!chart.nodes[op.agentId]) {
              expect(() => removeNode(chart, REALM, op.agentId)).toThrow(AppError);
              continue;
            }
            const before = chart;
            chart = removeNode(chart, REALM, op.agentId);
            // Everyone else keeps their chain of command, minus the removed agent.
            for (const agentId of Object.keys(chart.nodes)) {
              const expected = chainOf(before, agentId)
                .map((n) => n.agentId)
                .filter((id) => id !== op.agentId);
              expect(chainOf(chart, agentId).map((n) => n.agentId)).toEqual(expected);
            }
          } else {
            const manager = op.reportsTo;
            const refused =
              typeof manager === "string" && (!chart.nodes[manager] || wouldLoop(chart, op.agentId, manager));
            if (refused) {
              expect(() => setNode(chart, REALM, op.agentId, { reportsTo: manager, rank: op.rank })).toThrow(
                AppError,
              );
              continue;
            }
            chart = setNode(chart, REALM, op.agentId, { reportsTo: manager, rank: op.rank }).chart;
          }
          assertForest(chart);
          const forest = buildForest(chart);
          expect(flatten(forest).sort()).toEqual(Object.keys(chart.nodes).sort());
          for (const root of forest) expect(chart.nodes[root.agentId]?.reportsTo).toBeNull();
        }
      }),
      { numRuns: 300 },
    );
  });

  it("a set never changes any field it was not given", () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { maxLength: 20 }),
        agentArb,
        fc.record({
          title: fc.option(fc.string(), { nil: undefined }),
          rank: fc.option(fc.nat(9), { nil: undefined }),
        }),
        (ops, agentId, changes) => {
          let chart = emptyChart();
          for (const op of ops) {
            try {
              chart =
                op.kind === "set"
                  ? setNode(chart, REALM, op.agentId, { reportsTo: op.reportsTo, rank: op.rank }).chart
                  : removeNode(chart, REALM, op.agentId);
            } catch (error) {
              // Refusals are expected here; anything else is a bug.
              if (!(error instanceof AppError)) throw error;
            }
          }
          const before = chart.nodes[agentId];
          const after = setNode(chart, REALM, agentId, changes).node;
          expect(after.reportsTo).toBe(before?.reportsTo ?? null);
          expect(after.capabilities).toEqual(before?.capabilities ?? []);
          expect(after.title).toBe(changes.title ?? before?.title ?? "");
          expect(after.rank).toBe(changes.rank ?? before?.rank ?? 1);
        },
      ),
    );
  });
});
