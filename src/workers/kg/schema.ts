import { z } from "zod";

export const MAX_DEPTH = 10;
export const MAX_RESULTS = 500;
export const MAX_NODES = 500;
/** The size of one version's properties, as JSON. */
export const MAX_PROPERTIES_BYTES = 64 * 1024;

const agentId = z
  .string({ error: "agentId must be a string" })
  .min(1, "agentId is required")
  .max(256, "agentId must be at most 256 characters");
/** Entity names are keys: no NUL (state refuses it) and no \u0001 (it separates key parts). */
export const entityName = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .trim()
    .min(1, `${field} is required`)
    .max(500, `${field} must be at most 500 characters`)
    .refine(
      (name) => !name.includes("\u0000") && !name.includes("\u0001"),
      `${field} must not contain control characters \\u0000 or \\u0001`,
    );
const relationType = z
  .string({ error: "relation type must be a string" })
  .trim()
  .min(1, "relation type is required")
  .max(200, "relation type must be at most 200 characters");

export const relationSchema = z.strictObject({ target: entityName("target"), type: relationType });
export type Relation = z.infer<typeof relationSchema>;

export const addInput = z.strictObject({
  agentId,
  entity: entityName("entity"),
  type: z.string({ error: "type must be a string" }).trim().min(1, "type is required").max(200),
  properties: z
    .record(z.string(), z.unknown(), { error: "properties must be an object" })
    // Every version is kept and read back: one of megabytes, added again and again, made each read of the
    // entity's history a memory hog.
    .refine(
      (properties) => Buffer.byteLength(JSON.stringify(properties)) <= MAX_PROPERTIES_BYTES,
      `properties must be at most ${MAX_PROPERTIES_BYTES} bytes as JSON`,
    )
    .default({}),
  relations: z.array(relationSchema, { error: "relations must be an array" }).max(200).default([]),
});
export type AddInput = z.output<typeof addInput>;

const epochMs = (field: string) =>
  z
    .number({ error: `${field} must be epoch milliseconds` })
    .int(`${field} must be an integer`)
    .min(0);

export const timeRangeSchema = z
  .strictObject({ from: epochMs("timeRange.from"), to: epochMs("timeRange.to") })
  .refine((range) => range.from <= range.to, "timeRange.from must not be after timeRange.to");
export type TimeRange = z.infer<typeof timeRangeSchema>;

export const queryInput = z.strictObject({
  agentId,
  entity: entityName("entity"),
  depth: z
    .number({ error: "depth must be an integer" })
    .int("depth must be an integer")
    .min(0, "depth must be at least 0")
    .max(MAX_DEPTH, `depth must be at most ${MAX_DEPTH}`)
    .default(1),
  timeRange: timeRangeSchema.optional(),
  relationFilter: z.array(relationType).max(50).optional(),
});
export type QueryInput = z.output<typeof queryInput>;

export const DIRECTIONS = ["incoming", "outgoing", "both"] as const;
export type Direction = (typeof DIRECTIONS)[number];

export const traverseInput = z.strictObject({
  agentId,
  startEntity: entityName("startEntity"),
  direction: z.enum(DIRECTIONS, { error: "direction must be incoming, outgoing or both" }).default("both"),
  maxDepth: z
    .number({ error: "maxDepth must be an integer" })
    .int("maxDepth must be an integer")
    .min(1, "maxDepth must be at least 1")
    .max(MAX_DEPTH, `maxDepth must be at most ${MAX_DEPTH}`)
    .default(3),
  maxNodes: z
    .number({ error: "maxNodes must be an integer" })
    .int("maxNodes must be an integer")
    .min(1, "maxNodes must be at least 1")
    .max(MAX_NODES, `maxNodes must be at most ${MAX_NODES}`)
    .default(100),
});
export type TraverseInput = z.output<typeof traverseInput>;

export const timelineInput = z.strictObject({ agentId, entity: entityName("entity") });
export const diffInput = z.strictObject({
  agentId,
  entity: entityName("entity"),
  timestamp1: epochMs("timestamp1"),
  timestamp2: epochMs("timestamp2"),
});
export const statsInput = z.strictObject({ agentId });
export const purgeRealmInput = z.strictObject({ realmId: z.string().min(1).max(256) });
export const purgeAgentInput = z.strictObject({ realmId: z.string().min(1).max(256), agentId });

const relationView = z.object({ target: z.string(), type: z.string() });

/** One version of an entity (SPEC: Knowledge graph entity version). */
export const entityVersion = z.object({
  entity: z.string(),
  type: z.string(),
  properties: z.record(z.string(), z.unknown()),
  relations: z.array(relationView),
  version: z.number(),
  validFrom: z.number().describe("Epoch milliseconds"),
  validUntil: z.number().nullable().describe("Epoch milliseconds; null: still valid"),
});
export type EntityVersion = z.infer<typeof entityVersion>;

/** What the graph routes answer besides entity versions. */
export const traversalAnswer = z.object({
  adjacency: z.record(z.string(), z.array(z.string())).describe("Each expanded entity's neighbours"),
  paths: z
    .record(z.string(), z.array(z.string()))
    .describe("A shortest path from the start to each entity reached"),
  nodeCount: z.number(),
});
export const timelineAnswer = z.array(entityVersion.omit({ entity: true }).extend({ createdAt: z.number() }));
const change = z.union([
  z.object({ property: z.string(), value: z.unknown() }),
  z.object({ relation: relationView }),
]);
export const diffAnswer = z.object({
  entity: z.string(),
  fromVersion: z.number().nullable(),
  toVersion: z.number().nullable(),
  added: z.array(change),
  removed: z.array(change),
  modified: z.array(z.object({ property: z.string(), before: z.unknown(), after: z.unknown() })),
});

/** The current state of an entity: what traversal and stats read. A stub was only ever named as a target. */
export interface EntityHead {
  entity: string;
  type: string;
  version: number;
  validFrom: number;
  relations: Relation[];
  stub?: true;
}
export const statsAnswer = z.object({
  totalEntities: z.number(),
  totalRelations: z.number(),
  avgDegree: z.number(),
  connectedComponents: z.number(),
});
