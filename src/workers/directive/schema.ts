import { z } from "zod";
import { looseEnum } from "../../shared/loose-enum.ts";
import { nextCursor } from "../../shared/outputs.ts";
import { pageFields } from "../../shared/pagination.ts";

export const DIRECTIVE_LEVELS = ["realm", "team", "agent"] as const;
export const DIRECTIVE_STATUSES = ["Active", "Paused", "Complete", "Cancelled"] as const;
export const DIRECTIVE_PRIORITIES = ["critical", "high", "normal", "low"] as const;

export type DirectiveLevel = (typeof DIRECTIVE_LEVELS)[number];
export type DirectiveStatus = (typeof DIRECTIVE_STATUSES)[number];
export type DirectivePriority = (typeof DIRECTIVE_PRIORITIES)[number];

export const directiveRecord = z.object({
  id: z.string(),
  realmId: z.string(),
  title: z.string(),
  description: z.string().optional(),
  level: z.enum(DIRECTIVE_LEVELS),
  status: z.enum(DIRECTIVE_STATUSES),
  parentId: z.string().optional(),
  ownerAgentId: z.string().optional(),
  priority: z.enum(DIRECTIVE_PRIORITIES).optional(),
  version: z.number(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Directive = z.infer<typeof directiveRecord>;

export const ancestryEntry = z.object({ id: z.string(), title: z.string(), level: z.enum(DIRECTIVE_LEVELS) });
export type AncestryEntry = z.infer<typeof ancestryEntry>;

export const directivePage = z.object({
  directives: z.array(directiveRecord),
  count: z.number().describe("How many directives match, over all pages"),
  nextCursor,
});
export const ancestryAnswer = z.object({
  ancestry: z.array(ancestryEntry).describe("The directive first, then its parents up to the root"),
  depth: z.number(),
});

const id = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .min(1, `${field} is required`)
    .max(256);
const title = z
  .string({ error: "title must be a string" })
  .trim()
  .min(1, "title is required")
  .max(500, "title must be at most 500 characters");
const description = z.string({ error: "description must be a string" }).max(10_000);

export const level = looseEnum("level", DIRECTIVE_LEVELS);
export const status = looseEnum("status", DIRECTIVE_STATUSES);
export const priority = looseEnum("priority", DIRECTIVE_PRIORITIES);

export const createInput = z.strictObject({
  realmId: id("realmId"),
  title,
  level,
  description: description.optional(),
  parentId: id("parentId").optional(),
  ownerAgentId: id("ownerAgentId").optional(),
  priority: priority.optional(),
});
export type CreateInput = z.output<typeof createInput>;

export const directiveIdInput = z.strictObject({ realmId: id("realmId"), id: id("id") });

export const listInput = z.strictObject({
  realmId: id("realmId"),
  level: level.optional(),
  status: status.optional(),
  parentId: id("parentId").optional(),
  ...pageFields,
});
export type ListInput = Omit<z.output<typeof listInput>, "limit" | "cursor">;

/** The changeable fields; null clears an optional one (an owner that left, a priority dropped). */
export const changesSchema = z.strictObject({
  title: title.optional(),
  description: description.nullable().optional(),
  status: status.optional(),
  priority: priority.nullable().optional(),
  ownerAgentId: id("ownerAgentId").nullable().optional(),
});
export type DirectiveChanges = z.output<typeof changesSchema>;

export const updateInput = changesSchema.extend({
  realmId: id("realmId"),
  id: id("id"),
  expectedVersion: z
    .number({ error: "expectedVersion must be an integer" })
    .int("expectedVersion must be an integer")
    .min(1, "expectedVersion must be at least 1")
    .optional(),
});

export const purgeInput = z.strictObject({ realmId: id("realmId") });
