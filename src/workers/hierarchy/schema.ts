import { z } from "zod";

const id = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .trim()
    .min(1, `${field} is required`)
    .max(256);

const capability = z
  .string({ error: "capabilities must be strings" })
  .trim()
  .min(1, "capabilities must not be empty strings")
  .max(200);

export const setInput = z.strictObject({
  realmId: id("realmId"),
  agentId: id("agentId"),
  /** null makes the agent a root; omitted keeps its current manager. */
  reportsTo: id("reportsTo").nullable().optional(),
  title: z.string({ error: "title must be a string" }).max(500).optional(),
  capabilities: z
    .array(capability, { error: "capabilities must be an array of strings" })
    .max(200)
    .optional(),
  rank: z
    .number({ error: "rank must be an integer of 0 or more" })
    .int("rank must be an integer of 0 or more")
    .min(0, "rank must be an integer of 0 or more")
    .max(1_000_000)
    .optional(),
});

export const realmInput = z.strictObject({ realmId: id("realmId") });

export const treeInput = realmInput.extend({ rootAgentId: id("rootAgentId").optional() });

export const findInput = realmInput.extend({
  capability: z.string({ error: "capability is required" }).trim().min(1, "capability is required").max(200),
});

export const agentInput = realmInput.extend({ agentId: id("agentId") });

/** One agent's place in the org chart, as the routes answer it. */
export const hierarchyNode = z.object({
  realmId: z.string(),
  agentId: z.string(),
  reportsTo: z.string().nullable(),
  title: z.string(),
  capabilities: z.array(z.string()),
  rank: z.number().describe("1 is the most senior"),
});
export type HierarchyNode = z.infer<typeof hierarchyNode>;

export interface TreeNode {
  agentId: string;
  title: string;
  capabilities: string[];
  rank: number;
  reports: TreeNode[];
}
/** The chart as nested nodes (a recursive schema: zod cannot infer its type, so TreeNode is written once above). */
export const treeNode: z.ZodType<TreeNode> = z
  .object({
    agentId: z.string(),
    title: z.string(),
    capabilities: z.array(z.string()),
    rank: z.number(),
    get reports() {
      return z.array(treeNode);
    },
  })
  .meta({ id: "HierarchyTreeNode" });

export const treeAnswer = z.object({ roots: z.array(treeNode) });
export const findAnswer = z.object({ matches: z.array(hierarchyNode), count: z.number() });
export const chainAnswer = z.object({
  chain: z.array(hierarchyNode).describe("The agent, then its managers upwards"),
});
export const nodeDeleted = z.object({ deleted: z.boolean() });
