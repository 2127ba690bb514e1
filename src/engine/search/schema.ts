import { z } from "zod";
import { MAX_ID_BYTES, scopeSchema, storableKey, storableText } from "../state/schema.ts";
import { MAX_TEXT_BYTES } from "./values.ts";

const indexSchema = storableText("index", 256).min(1, "index must not be empty");
const idSchema = storableKey("id", MAX_ID_BYTES);

export const DEFAULT_SEARCH_LIMIT = 10;
export const MAX_SEARCH_LIMIT = 200;
export const MAX_QUERY_LENGTH = 4096;

export const searchPutInput = z.strictObject({
  index: indexSchema,
  scope: scopeSchema,
  id: idSchema,
  // Characters here; the byte limit is checked when the document is stored.
  text: storableText("text", MAX_TEXT_BYTES),
  data: z.unknown().optional(),
  createdAt: z.iso.datetime({ offset: true }).optional(),
});

export const MAX_PUT_MANY = 100;

export const searchPutManyInput = z
  .strictObject({
    index: indexSchema,
    scope: scopeSchema,
    docs: z
      .array(searchPutInput.omit({ index: true, scope: true }))
      .min(1, "docs must hold at least one document")
      .max(MAX_PUT_MANY, `docs must hold at most ${MAX_PUT_MANY} documents`),
  })
  .refine((input) => new Set(input.docs.map((doc) => doc.id)).size === input.docs.length, {
    path: ["docs"],
    message: "docs must not repeat an id",
  });

export const searchDeleteInput = z.strictObject({ index: indexSchema, scope: scopeSchema, id: idSchema });

export const searchDeleteScopeInput = z.strictObject({ index: indexSchema, scope: scopeSchema });

export const searchListInput = z.strictObject({
  index: indexSchema,
  scope: scopeSchema,
  limit: z.number().int().min(1).max(MAX_SEARCH_LIMIT).default(50),
  cursor: z.string().min(1).max(512).optional(),
});

export const searchQueryInput = z.strictObject({
  index: indexSchema,
  scope: scopeSchema,
  query: z.string().min(1).max(MAX_QUERY_LENGTH),
  limit: z.number().int().min(1).max(MAX_SEARCH_LIMIT).default(DEFAULT_SEARCH_LIMIT),
  recencyHalfLifeMs: z.number().positive().max(Number.MAX_SAFE_INTEGER).optional(),
  candidates: z
    .boolean()
    .optional()
    .describe(
      "true: a candidate list for fusion with another list (hybrid recall): the best of the scope's newest matches and of the older ones holding a rare word, not the best of every match",
    ),
});

export const searchCountInput = z.strictObject({ index: indexSchema, scope: scopeSchema });

export const MAX_GET_IDS = 1000;

export const searchGetInput = z.strictObject({
  index: indexSchema,
  scope: scopeSchema,
  ids: z.array(idSchema).max(MAX_GET_IDS, `ids must hold at most ${MAX_GET_IDS} ids`),
});
