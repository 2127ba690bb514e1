import { z } from "zod";

/**
 * Building blocks of functions' documented answers (`output`), which become the OpenAPI document's
 * response schemas and are checked against the code: by the compiler (WorkerClient.registerFunction)
 * and, with AGENTOS_CHECK_OUTPUTS, against every answer (http/output-check.ts).
 */

/** The function answers nothing: its route answers 204. */
export const noContent = z.void();

/** A list page's cursor for the next page, null on the last. */
export const nextCursor = z
  .string()
  .nullable()
  .describe("Pass as `cursor` for the next page; null on the last");

/**
 * Another function's answer passed on as this one's. Its shape is that function's contract, so the
 * compiler cannot check it against `output`; AGENTOS_CHECK_OUTPUTS (http/output-check.ts) does, at run time.
 */
export async function relayed<Output extends z.ZodType>(
  _output: Output,
  answer: Promise<unknown>,
): Promise<z.input<Output>> {
  return (await answer) as z.input<Output>;
}

/** An entry of a hash chain (shared/hash-chain.ts) with its own fields. */
export function chainEntry<Shape extends z.ZodRawShape>(fields: z.ZodObject<Shape>) {
  return fields.extend({
    seq: z.number(),
    id: z.string(),
    timestamp: z.string(),
    prevHash: z.string(),
    hash: z.string(),
  });
}

/** A hash chain's verification. */
export const chainVerifyResult = z.object({
  valid: z.boolean(),
  /** Entries found in the chain. */
  length: z.number(),
  /** Seq of the first entry that fails (or is missing), null when valid. */
  brokenAt: z.number().nullable(),
  reason: z.string().optional(),
});

/** Who a record acts for (engine Principal without anonymous): a run's rights, a proposal's submitter. */
export const principalRecord = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("system") }),
  z.object({ kind: z.literal("admin"), keyId: z.string() }),
  // `agentId`: the agent whose own call (a tool of its turn) started the run or made the proposal.
  z.object({
    kind: z.literal("realm"),
    keyId: z.string(),
    realmId: z.string(),
    agentId: z.string().optional(),
  }),
]);
