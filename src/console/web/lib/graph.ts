import type { Step } from "../types.ts";

/** A workflow step as the definition view needs it. */
export type StepView = Pick<Step, "name" | "functionId" | "mode" | "condition" | "until" | "maxIterations">;

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
