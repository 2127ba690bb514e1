import { z } from "zod";
import { badRequest, forbidden } from "../../shared/errors.ts";
import { renderArgs } from "../../shared/templates.ts";
import { agentIdField } from "./fields.ts";
import { defineTool, type ToolContext } from "./tool.ts";

export const MAX_COMPOSE_STEPS = 10;

const compose = defineTool({
  id: "tool::compose",
  description: `Run up to ${MAX_COMPOSE_STEPS} of your tools in sequence, each step's args may use {{input.x}} (compose's input), {{prev.x}} (the previous step's result) and {{steps.N.x}}: {results, output (the last result)}. Stops at the first failing step.`,
  input: z.strictObject({
    agentId: agentIdField,
    input: z.unknown().optional(),
    steps: z
      .array(
        z.strictObject({
          tool: z.string().regex(/^tool::[\w.-]+$/, "tool must be a tool id such as tool::file_read"),
          args: z.record(z.string(), z.unknown()).default({}),
        }),
      )
      .min(1, "steps must not be empty")
      .max(MAX_COMPOSE_STEPS, `at most ${MAX_COMPOSE_STEPS} steps`),
  }),
  async run({ agentId, input, steps }, ctx) {
    if (steps.some((step) => step.tool === "tool::compose"))
      throw badRequest("compose cannot contain compose");
    // Every step is one the agent itself may call; checked before anything runs.
    const { denied } = (await ctx.trigger({
      function_id: "agent::authorize",
      payload: { agentId, functionIds: steps.map((step) => step.tool) },
    })) as { denied: string[] };
    if (denied.length > 0) throw forbidden(`You may not call ${denied.join(", ")}`);
    const takesAgent = await Promise.all(steps.map((step) => takesAgentId(ctx.trigger, step.tool)));
    const results: unknown[] = [];
    for (const [index, step] of steps.entries()) {
      const args = renderArgs(step.args, { input, prev: results.at(-1) ?? null, steps: results }) as Record<
        string,
        unknown
      >;
      // As in an agent's own turn, a tool that acts for an agent acts for this one.
      const payload = takesAgent[index] ? { ...args, agentId } : args;
      try {
        results.push(await ctx.trigger({ function_id: step.tool, payload }));
      } catch (error) {
        throw badRequest(`Step ${index} (${step.tool}) failed: ${(error as Error).message}`);
      }
    }
    return { results, output: results.at(-1) };
  },
});

/** Whether the function's input has an agentId field (from its registered schema). */
async function takesAgentId(trigger: ToolContext["trigger"], functionId: string): Promise<boolean> {
  const info = (await trigger({
    function_id: "engine::functions::info",
    payload: { function_id: functionId },
  })) as {
    request_schema?: { properties?: Record<string, unknown> };
  } | null;
  if (!info) throw badRequest(`No tool ${functionId}`);
  return info.request_schema?.properties?.agentId !== undefined;
}

export const composeTools = [compose];
