import { templateVariables } from "../../shared/templates.ts";
import type { Step } from "./schema.ts";

/**
 * Variables every step may name: `input` (the previous step's output, the run's input in the first
 * step), `run` (`run.input`: the run's own input in every step; `run.id`), `agentId` and `__fanout`
 * (the last fanout batch's outputs; allowed anywhere, as it always was, since a retried run keeps it).
 */
const EVERY_STEP = ["input", "run", "agentId", "__fanout"];

/**
 * The variables step `index` can see when it runs: the outputVars of the steps before it (not those of
 * its own fanout batch, which run alongside it), its own in a loop (from the second pass), `iteration`
 * in a loop and `fanoutResults` in a collect step.
 */
export function variablesAt(steps: Step[], index: number): string[] {
  const step = steps[index] as Step;
  let batchStart = index;
  if (step.mode === "fanout") while (batchStart > 0 && steps[batchStart - 1]?.mode === "fanout") batchStart--;
  const earlier = steps.slice(0, batchStart).flatMap((each) => (each.outputVar ? [each.outputVar] : []));
  const own = step.mode === "loop" && step.outputVar ? [step.outputVar] : [];
  const mode = step.mode === "loop" ? ["iteration"] : step.mode === "collect" ? ["fanoutResults"] : [];
  return [...new Set([...EVERY_STEP, ...earlier, ...own, ...mode])];
}

/**
 * The first template (`promptTemplate` or `args`) that names a variable its step will not have, as a
 * message naming the step, the field and the variable; null when every template is satisfiable. A path
 * into a variable (`{{input.topic}}`) is only known at run time and is not checked.
 */
export function templateProblem(steps: Step[]): string | null {
  for (const [index, step] of steps.entries()) {
    const known = variablesAt(steps, index);
    for (const field of ["promptTemplate", "args"] as const) {
      if (step[field] === undefined) continue;
      const unknown = templateVariables(step[field]).find((name) => !known.includes(name));
      if (unknown === undefined) continue;
      const later = steps.findIndex((other, at) => at >= index && other.outputVar === unknown);
      const why = later >= 0 ? ` (step ${later} sets it, which runs later or alongside)` : "";
      return `steps.${index}.${field}: step "${step.name}" names {{${unknown}}}, which the run will not have at that step${why} (variables: ${known.join(", ")}; {{run.input}} is the run's input; write \\{{ for a literal {{)`;
    }
  }
  return null;
}
