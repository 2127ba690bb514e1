import { z } from "zod";
import { storableText } from "../../engine/state/schema.ts";
import { boundedJsonObject, MAX_METADATA_BYTES } from "../../shared/limits.ts";
import { nextCursor } from "../../shared/outputs.ts";

export { DEFAULT_REALM_ID } from "../../shared/access.ts";
export const REALMS_SCOPE = "realms";
export const EXPORT_VERSION = "1.0";

export const realmStatuses = ["Active", "Paused", "Archived"] as const;
export type RealmStatus = (typeof realmStatuses)[number];

/** A realm as the routes answer it. */
export const realmView = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().optional(),
  status: z.enum(realmStatuses),
  owner: z.string(),
  defaultModel: z.string().optional(),
  maxAgents: z.number().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  /**
   * Set when realm::delete starts purging the realm's data: from then on the realm takes no new data.
   * A failed purge leaves it set (the realm read-only, its delete pending) until a retried delete ends.
   */
  deleting: z.literal(true).optional().describe("true while a delete of the realm is under way or pending"),
});
export type Realm = z.infer<typeof realmView>;

/** Which status may follow which (DESIGN §5): Active⇄Paused, either → Archived, Archived is terminal. */
export const transitions: Record<RealmStatus, readonly RealmStatus[]> = {
  Active: ["Paused", "Archived"],
  Paused: ["Active", "Archived"],
  Archived: [],
};

export const realmId = storableText("id", 256).min(1, "id must not be empty");
const requiredText = (field: string) =>
  z.string().trim().min(1, `${field} is required`).max(200, `${field} must be at most 200 characters`);
const description = z.string().max(4000, "description must be at most 4000 characters");
const model = z.string().trim().min(1, "defaultModel must not be empty").max(256);
const maxAgents = z
  .number()
  .int("maxAgents must be an integer")
  .min(0, "maxAgents must be at least 0")
  .max(1_000_000, "maxAgents must be at most 1000000");
const metadata = boundedJsonObject("metadata", MAX_METADATA_BYTES);

export const createRealmInput = z.strictObject({
  name: requiredText("name"),
  owner: requiredText("owner"),
  description: description.optional(),
  defaultModel: model.optional(),
  maxAgents: maxAgents.optional(),
  metadata: metadata.optional(),
});
export type CreateRealmInput = z.infer<typeof createRealmInput>;

/** null clears an optional field; an absent field stays as it is. */
export const updateRealmInput = z.strictObject({
  id: realmId,
  name: requiredText("name").optional(),
  description: description.nullable().optional(),
  status: z.enum(realmStatuses).optional(),
  defaultModel: model.nullable().optional(),
  maxAgents: maxAgents.nullable().optional(),
  metadata: metadata.nullable().optional(),
});
export type UpdateRealmInput = z.infer<typeof updateRealmInput>;

export const realmIdInput = z.strictObject({ id: realmId });

export const exportInput = z.strictObject({ id: realmId, scrubSecrets: z.boolean().default(true) });

/**
 * `{data, newOwner?}` as the spec says, or the export document itself as export answered it (a body with
 * `realm` and no `data`; `newOwner` may then come as a query parameter).
 */
export const importInput = z.preprocess(
  unwrapExportDocument,
  z.strictObject({
    data: z.record(z.string(), z.unknown(), { error: "data must be an export document (an object)" }),
    newOwner: requiredText("newOwner").optional(),
  }),
);

function unwrapExportDocument(input: unknown): unknown {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return input;
  if ("data" in input || !("realm" in input)) return input;
  const { newOwner, ...data } = input as Record<string, unknown>;
  return newOwner === undefined ? { data } : { data, newOwner };
}

/** The parts of an export document that import reads; unknown fields are ignored (forward compatible). */
const idText = z.string().min(1).max(256);
export const exportDocument = z.object({
  realm: z.object({
    name: requiredText("realm.name"),
    owner: requiredText("realm.owner").optional(),
    description: description.nullish(),
    status: z.string().optional(),
    defaultModel: model.nullish(),
    maxAgents: maxAgents.nullish(),
    metadata: metadata.nullish(),
  }),
  agents: z.array(z.looseObject({ id: idText, name: z.string().optional() })).default([]),
  directives: z
    .array(
      z.looseObject({
        id: idText,
        title: z.string().optional(),
        parentId: idText.nullish(),
        ownerAgentId: idText.nullish(),
        status: z.string().optional(),
      }),
    )
    .default([]),
  hierarchy: z
    .array(
      z.looseObject({
        agentId: idText,
        reportsTo: idText.nullish(),
        title: z.string().nullish(),
        capabilities: z.array(z.string()).nullish(),
        rank: z.number().nullish(),
      }),
    )
    .default([]),
  secrets: z.record(z.string(), z.string()).optional(),
});
export type ExportDocument = z.infer<typeof exportDocument>;

/** One row of the exported org chart: the hierarchy tree flattened parent-first. */
export const hierarchyRow = z.object({
  agentId: z.string(),
  reportsTo: z.string().nullable(),
  title: z.string().nullable(),
  capabilities: z.array(z.string()),
  rank: z.number(),
});
export type HierarchyRow = z.infer<typeof hierarchyRow>;

export const realmPage = z.object({ realms: z.array(realmView), nextCursor });
export const realmDeleted = z.object({ deleted: z.boolean() });
export const realmImported = z.object({ imported: z.boolean(), realmId: z.string() });
/** What realm::export answers and realm::import takes back. */
export const exportAnswer = z.object({
  version: z.string(),
  realm: realmView,
  agents: z
    .array(z.record(z.string(), z.unknown()))
    .describe("The realm's agents as GET /api/agents/:id shows them"),
  directives: z.array(z.record(z.string(), z.unknown())),
  hierarchy: z.array(hierarchyRow),
  secrets: z.record(z.string(), z.string()).optional().describe("Only with scrubSecrets: false (admin)"),
});
