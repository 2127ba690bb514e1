import { z } from "zod";
import { actsForAgent, agentPrincipal } from "../../engine/acting-agent.ts";
import { call } from "../../engine/call.ts";
import { badRequest, forbidden } from "../../shared/errors.ts";
import { renderArgs } from "../../shared/templates.ts";
import { agentIdField } from "./fields.ts";
import { jsonWeight } from "./formats/weight.ts";
import { defineTool, type ToolContext } from "./tool.ts";

export const MAX_COMPOSE_STEPS = 10;
/**
 * The most compose's answer may weigh as JSON: each step's own answer is bounded, but a step may pass
 * its input on whole, so ten of them answered half a gigabyte into the agent's context.
 */
const MAX_RESULTS_WEIGHT = 50_000_000;

const compose = defineTool({
  id: "tool::compose",
  description: `Run up to ${MAX_COMPOSE_STEPS} of your tools in sequence, each step's args may use {{input.x}} (compose's input), {{prev.x}} (the previous step's result) and {{steps.N.x}}: {results, output (the last result)}. Stops at the first failing step.`,
  actsFor: "agent",
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
    const agent = await ctx.agent(agentId);
    // Every step is one the agent itself may call; checked before anything runs.
    const { denied } = await call(ctx.trigger, "agent::authorize", {
      agentId,
      functionIds: steps.map((step) => step.tool),
    });
    if (denied.length > 0) throw forbidden(`You may not call ${denied.join(", ")}`);
    const forAgent = await Promise.all(steps.map((step) => actsForCaller(ctx.trigger, step.tool)));
    const results: unknown[] = [];
    const sizes = new WeakMap<object, number>();
    let weight = 0;
    for (const [index, step] of steps.entries()) {
      const vars = { input, prev: results.at(-1) ?? null, steps: results };
      let args: Record<string, unknown>;
      try {
        args = renderArgs(step.args, vars) as Record<string, unknown>;
      } catch (error) {
        throw badRequest(`Step ${index} (${step.tool}): its args: ${(error as Error).message}`);
      }
      // As in the agent's own turn: each step runs as the agent, and a tool that acts for an agent acts
      // for this one whatever the arguments say.
      if (forAgent[index]) delete args.agentId;
      try {
        results.push(
          await ctx.trigger({ function_id: step.tool, payload: args, auth: agentPrincipal(agent) }),
        );
      } catch (error) {
        throw badRequest(`Step ${index} (${step.tool}) failed: ${(error as Error).message}`);
      }
      weight += jsonWeight(results.at(-1), MAX_RESULTS_WEIGHT, sizes);
      if (weight > MAX_RESULTS_WEIGHT)
        throw badRequest(
          `Step ${index} (${step.tool}): the results so far weigh more than ${MAX_RESULTS_WEIGHT} bytes as JSON`,
        );
    }
    return { results, output: results.at(-1) };
  },
});

/** Whether the function declares that it acts for the calling agent. */
async function actsForCaller(trigger: ToolContext["trigger"], functionId: string): Promise<boolean> {
  const info = await call(trigger, "engine::functions::info", { function_id: functionId }).catch(() => null);
  if (!info) throw badRequest(`No tool ${functionId}`);
  return actsForAgent(info.metadata);
}

export const composeTools = [compose];
