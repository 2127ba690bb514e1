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
