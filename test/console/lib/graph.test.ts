import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  END,
  type GraphEdge,
  graphRows,
  NODE,
  START,
  type StepView,
  workflowGraph,
} from "../../../src/console/web/lib/graph.ts";

const step = (name: string, mode: StepView["mode"] = "sequential"): StepView => ({
  name,
  functionId: "f::x",
  mode,
});

describe("graphRows", () => {
  it("puts consecutive fanout steps side by side, then the collect step, and marks conditions and loops", () => {
    const rows = graphRows([
      step("start"),
      step("a", "fanout"),
      step("b", "fanout"),
      step("gather", "collect"),
      step("check", "conditional"),
      step("again", "loop"),
      step("c", "fanout"),
    ]);
    expect(rows.map((row) => [row.kind, row.steps.map((s) => s.name)])).toEqual([
      ["step", ["start"]],
      ["fanout", ["a", "b"]],
      ["collect", ["gather"]],
      ["conditional", ["check"]],
      ["loop", ["again"]],
      ["fanout", ["c"]],
    ]);
  });

  it("draws nothing for no steps", () => {
    expect(graphRows([])).toEqual([]);
  });
});

const edgesOf = (edges: GraphEdge[], kind: GraphEdge["kind"]) =>
  edges.filter((edge) => edge.kind === kind).map((edge) => `${edge.from}>${edge.to}`);

describe("workflowGraph", () => {
  it("splits into a fanout's branches, gathers them into the collect step, passes around a condition and loops back", () => {
    const { edges } = workflowGraph([
      step("start"),
      step("a", "fanout"),
      step("b", "fanout"),
      step("gather", "collect"),
      step("check", "conditional"),
      step("again", "loop"),
    ]);
    expect(edgesOf(edges, "next")).toEqual([
      `${START}>start`,
      "start>a",
      "start>b",
      "gather>check",
      "check>again",
      `again>${END}`,
    ]);
    expect(edgesOf(edges, "gather")).toEqual(["a>gather", "b>gather"]);
    expect(edgesOf(edges, "skip")).toEqual(["gather>again"]);
    expect(edgesOf(edges, "repeat")).toEqual(["again>again"]);
  });

  it("draws the way from input to output for no steps", () => {
    const graph = workflowGraph([]);
    expect(graph.nodes.map((node) => node.id)).toEqual([START, END]);
    expect(edgesOf(graph.edges, "next")).toEqual([`${START}>${END}`]);
  });

  const modes = ["sequential", "fanout", "collect", "conditional", "loop"] as const;
  const definitions = fc
    .array(fc.constantFrom(...modes), { maxLength: 14 })
    .map((list) => list.map((mode, index) => step(`s${index}`, mode)));

  it("gives every step one node, no two overlapping, inside the drawing", () => {
    fc.assert(
      fc.property(definitions, (steps) => {
        const graph = workflowGraph(steps);
        expect(graph.nodes.map((node) => node.id)).toEqual([START, ...steps.map((s) => s.name), END]);
        for (const node of graph.nodes) {
          expect(node.x).toBeGreaterThanOrEqual(0);
          expect(node.x + NODE.width).toBeLessThanOrEqual(graph.width);
          expect(node.y + NODE.height).toBeLessThanOrEqual(graph.height);
        }
        for (const [i, a] of graph.nodes.entries())
          for (const b of graph.nodes.slice(i + 1)) {
            const apart =
              a.x + NODE.width <= b.x ||
              b.x + NODE.width <= a.x ||
              a.y + NODE.height <= b.y ||
              b.y + NODE.height <= a.y;
            expect(apart, `${a.id} overlaps ${b.id}`).toBe(true);
          }
      }),
    );
  });

  it("reaches every step from the input and the output from every step, whichever conditions fail", () => {
    fc.assert(
      fc.property(definitions, (steps) => {
        const { nodes, edges } = workflowGraph(steps);
        const ids = new Set(nodes.map((node) => node.id));
        for (const edge of edges) expect(ids.has(edge.from) && ids.has(edge.to)).toBe(true);
        const reach = (from: string, along: (edge: GraphEdge) => [string, string]) => {
          const seen = new Set([from]);
          const queue = [from];
          for (let at = queue.shift(); at !== undefined; at = queue.shift())
            for (const edge of edges) {
              const [a, b] = along(edge);
              if (a === at && !seen.has(b)) seen.add(b), queue.push(b);
            }
          return seen;
        };
        expect(reach(START, (edge) => [edge.from, edge.to]).size).toBe(ids.size);
        expect(reach(END, (edge) => [edge.to, edge.from]).size).toBe(ids.size);
        // Skipping every conditional step still leads from input to output.
        const conditional = new Set(steps.filter((s) => s.mode === "conditional").map((s) => s.name));
        const open = edges.filter((edge) => !conditional.has(edge.to) && !conditional.has(edge.from));
        const seen = new Set([START]);
        for (let grew = true; grew; ) {
          grew = false;
          for (const edge of open)
            if (seen.has(edge.from) && !seen.has(edge.to)) seen.add(edge.to), (grew = true);
        }
        expect(seen.has(END)).toBe(true);
      }),
    );
  });
});
