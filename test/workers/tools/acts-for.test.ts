import { describe, expect, it } from "vitest";
import { z } from "zod";
import { withDefaultService } from "../../../scripts/default-service.ts";
import { actsForAgent } from "../../../src/engine/acting-agent.ts";
import { isInternalFunction } from "../../../src/shared/internal-functions.ts";
import { ALL_TOOLS } from "../../../src/workers/tools/catalog.ts";

const inputFields = (schema: z.ZodType | undefined) =>
  schema
    ? Object.keys(
        (z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }).properties ?? {}) as object,
      )
    : [];

describe("functions that act for the calling agent", () => {
  it("are declared exactly by the tools whose input names the agent (agentId)", () => {
    const wrong = ALL_TOOLS.filter(
      (tool) => (tool.actsFor === "agent") !== inputFields(tool.input).includes("agentId"),
    ).map((tool) => `${tool.id} (actsFor ${tool.actsFor ?? "unset"})`);
    expect(wrong).toEqual([]);
  });

  it("include every function an agent may call that takes an agentId, so the engine fills in its own", async () => {
    const undeclared = await withDefaultService(async (service) =>
      service.engine.functions
        .list()
        .filter((fn) => !isInternalFunction(fn.id, fn.metadata) && inputFields(fn.input).includes("agentId"))
        .filter((fn) => !actsForAgent(fn.metadata))
        .map((fn) => fn.id),
    );
    expect(undeclared).toEqual([]);
  }, 60_000);
});
