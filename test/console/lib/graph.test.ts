import { describe, expect, it } from "vitest";
import { graphRows, type StepView } from "../../../src/console/web/lib/graph.ts";

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
