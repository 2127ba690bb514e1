import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Connectivity } from "../../../src/workers/kg/connectivity.ts";

/** Components of the multigraph counted from scratch: a union-find over every edge still there. */
function recount(nodes: Set<string>, edges: Map<string, number>): number {
  const parent = new Map([...nodes].map((node) => [node, node]));
  const find = (node: string): string => {
    while (parent.get(node) !== node) node = parent.get(node) as string;
    return node;
  };
  let components = nodes.size;
  for (const [pair, count] of edges) {
    if (count === 0) continue;
    const [a, b] = pair.split("|") as [string, string];
    const [ra, rb] = [find(a), find(b)];
    if (ra !== rb) {
      parent.set(ra, rb);
      components--;
    }
  }
  return components;
}

const node = fc.constantFrom(..."abcdefghij");
const step = fc.record({ remove: fc.boolean(), a: node, b: node });

describe("connectivity under insertions and deletions", () => {
  it("counts the components a from-scratch recount finds after every step", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 120 }), (steps) => {
        const graph = new Connectivity();
        const nodes = new Set<string>();
        const edges = new Map<string, number>();
        for (const { remove, a, b } of steps) {
          const pair = [a, b].sort().join("|");
          if (remove) {
            graph.removeEdge(a, b);
            if (a !== b && (edges.get(pair) ?? 0) > 0) edges.set(pair, (edges.get(pair) as number) - 1);
          } else {
            graph.addEdge(a, b);
            nodes.add(a).add(b);
            if (a !== b) edges.set(pair, (edges.get(pair) ?? 0) + 1);
          }
          expect(graph.nodes).toBe(nodes.size);
          expect(graph.components).toBe(recount(nodes, edges));
        }
      }),
      { numRuns: 500 },
    );
  });

  it("splits a long path in the middle and joins it again", () => {
    const graph = new Connectivity();
    for (let i = 0; i < 1000; i++) graph.addEdge(`n${i}`, `n${i + 1}`);
    expect(graph.components).toBe(1);
    graph.removeEdge("n500", "n501");
    expect(graph.components).toBe(2);
    graph.addEdge("n0", "n1000");
    expect(graph.components).toBe(1);
    graph.removeEdge("n0", "n1");
    expect(graph.components).toBe(2);
  });
});
