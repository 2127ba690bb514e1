import { z } from "zod";
import { MAX_ID_BYTES, scopeSchema, storableKey, storableText } from "../state/schema.ts";
import { MAX_DIMENSIONS } from "./scan.ts";

const indexSchema = storableText("index", 256).min(1, "index must not be empty");
const idSchema = storableKey("id", MAX_ID_BYTES);
const modelSchema = storableText("model", 256).min(1, "model must not be empty");

/** A vector as it travels in a payload: finite numbers (zod refuses NaN and ±Infinity). */
export const vectorSchema = z
  .array(z.number())
  .min(1, "vector must not be empty")
  .max(MAX_DIMENSIONS, `vector must have at most ${MAX_DIMENSIONS} dimensions`);

export const MAX_VECTOR_PUT_MANY = 100;
export const MAX_VECTOR_LIMIT = 1000;
export const MAX_MISSING_IDS = 1000;

export const vectorPutManyInput = z.strictObject({
  index: indexSchema,
  scope: scopeSchema,
  model: modelSchema,
  entries: z
    .array(z.strictObject({ id: idSchema, vector: vectorSchema }))
    .min(1, "entries must hold at least one vector")
    .max(MAX_VECTOR_PUT_MANY, `entries must hold at most ${MAX_VECTOR_PUT_MANY} vectors`),
});

export const vectorDeleteInput = z.strictObject({ index: indexSchema, scope: scopeSchema, id: idSchema });

export const vectorDeleteScopeInput = z.strictObject({ index: indexSchema, scope: scopeSchema });

export const vectorDeleteOtherModelsInput = z.strictObject({
  index: indexSchema,
  scope: scopeSchema,
  model: modelSchema,
});

export const vectorQueryInput = z.strictObject({
  index: indexSchema,
  scope: scopeSchema,
  model: modelSchema,
  vector: vectorSchema,
  limit: z.number().int().min(1).max(MAX_VECTOR_LIMIT).default(10),
  rescore: z.number().int().min(1).max(100_000).optional(),
});

export const vectorCountInput = z.strictObject({
  index: indexSchema,
  scope: scopeSchema,
  model: modelSchema.optional(),
});

export const vectorMissingInput = z.strictObject({
  index: indexSchema,
  scope: scopeSchema,
  model: modelSchema,
  ids: z.array(idSchema).max(MAX_MISSING_IDS, `ids must hold at most ${MAX_MISSING_IDS} ids`),
});

export const vectorRefuseInput = z.strictObject({
  index: indexSchema,
  scope: scopeSchema,
  model: modelSchema,
  ids: z
    .array(idSchema)
    .min(1, "ids must hold at least one id")
    .max(MAX_VECTOR_PUT_MANY, `ids must hold at most ${MAX_VECTOR_PUT_MANY} ids`),
});

export const vectorStored = z.object({ stored: z.number().int() });
export const vectorRefused = z.object({ refused: z.number().int() });
export const vectorDeleted = z.object({ deleted: z.boolean() });
export const vectorScopeDeleted = z.object({ deleted: z.number().int() });
export const vectorHits = z.object({
  results: z.array(
    z.object({
      id: z.string(),
      score: z.number().describe("Cosine similarity with the query in [-1, 1]"),
    }),
  ),
});
export const vectorCount = z.object({
  count: z.number().int(),
  refused: z
    .number()
    .int()
    .describe("Ids refused by the provider (see vector::refuse), of the model or of all"),
});
export const vectorMissing = z.object({ ids: z.array(z.string()) });
