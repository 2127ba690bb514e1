import type { Step } from "../types.ts";

/** A workflow step as the definition view needs it. */
export type StepView = Pick<Step, "name" | "functionId" | "mode" | "condition" | "until"> & {
  maxIterations?: number;
};

/** One row of the drawn graph: steps that run side by side, and how the row is reached. */
export interface GraphRow {
  steps: StepView[];
  kind: "step" | "fanout" | "collect" | "conditional" | "loop";
}

/**
 * The steps as rows top to bottom (DESIGN §6): consecutive fanout steps start together, so they share
 * a row; a collect step gathers them; a conditional step may be skipped; a loop repeats itself.
 */
export function graphRows(steps: StepView[]): GraphRow[] {
  const rows: GraphRow[] = [];
  for (const step of steps) {
    const last = rows.at(-1);
    if (step.mode === "fanout" && last?.kind === "fanout") last.steps.push(step);
    else rows.push({ steps: [step], kind: step.mode === "sequential" ? "step" : step.mode });
  }
  return rows;
}

/** The run's input and its result, drawn as the graph's first and last nodes. */
export const START = "\u0000input";
export const END = "\u0000output";

export interface GraphNode {
  id: string;
  step?: StepView;
  x: number;
  y: number;
}

/**
 * next: the run goes on from one step to the next (into a fanout: every branch starts; out of one: the
 * next step waits for all); gather: a branch's output reaches a collect step; skip: the way past a
 * conditional step whose condition failed; repeat: a loop's next pass.
 */
export interface GraphEdge {
  from: string;
  to: string;
  kind: "next" | "gather" | "skip" | "repeat";
}

export const NODE = { width: 190, height: 54 };
const GAP = { column: 24, row: 46 };

/** The definition as a drawable graph: each step a node placed by row, and how the run moves between them. */
export function workflowGraph(steps: StepView[]): {
  nodes: GraphNode[];
  edges: GraphEdge[];
  width: number;
  height: number;
} {
  const rows = graphRows(steps);
  const levels: Array<{ ids: string[]; kind: GraphRow["kind"] | "end" }> = [
    { ids: [START], kind: "end" },
    ...rows.map((row) => ({ ids: row.steps.map((step) => step.name), kind: row.kind })),
    { ids: [END], kind: "end" },
  ];
  const widest = Math.max(...levels.map((level) => level.ids.length));
  // Room on the right for the edges that go around a conditional or back into a loop.
  const width = widest * (NODE.width + GAP.column) - GAP.column + 2 * GAP.column + 60;
  const center = (width - 60) / 2;
  const byName = new Map(steps.map((step) => [step.name, step]));
  const nodes = levels.flatMap((level, index) => {
    const span = level.ids.length * (NODE.width + GAP.column) - GAP.column;
    return level.ids.map((id, column) => ({
      id,
      ...(byName.has(id) ? { step: byName.get(id) } : {}),
      x: center - span / 2 + column * (NODE.width + GAP.column),
      y: GAP.row / 2 + index * (NODE.height + GAP.row),
    }));
  });
  const edges: GraphEdge[] = [];
  levels.forEach((level, index) => {
    const next = levels[index + 1];
    if (next) {
      const kind = next.kind === "collect" && level.kind === "fanout" ? "gather" : "next";
      for (const from of level.ids) for (const to of next.ids) edges.push({ from, to, kind });
    }
    if (level.kind === "conditional" && next) {
      // Past this step from the step before it, or, when that was a skipped conditional too, from before that.
      let first = index - 1;
      while (first > 0 && levels[first]?.kind === "conditional") first--;
      for (const before of levels.slice(first, index))
        for (const from of before.ids) for (const to of next.ids) edges.push({ from, to, kind: "skip" });
    }
    if (level.kind === "loop") for (const id of level.ids) edges.push({ from: id, to: id, kind: "repeat" });
  });
  return { nodes, edges, width, height: levels.length * (NODE.height + GAP.row) };
}
