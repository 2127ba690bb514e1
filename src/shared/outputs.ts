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
