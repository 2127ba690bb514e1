import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ALL_TOOLS } from "../../../src/workers/tools/catalog.ts";

const inputFields = (schema: z.ZodType) =>
  Object.keys((z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }).properties ?? {}) as object);

describe("tools that act for the calling agent", () => {
  it("declare it exactly when their input names the agent (agentId), so the engine fills it in", () => {
    const wrong = ALL_TOOLS.filter(
      (tool) => (tool.actsFor === "agent") !== inputFields(tool.input).includes("agentId"),
    ).map((tool) => `${tool.id} (actsFor ${tool.actsFor ?? "unset"})`);
    expect(wrong).toEqual([]);
  });
});
