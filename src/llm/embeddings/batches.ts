/**
 * How texts are split into requests: in order, each request at most `maxCount` inputs (OpenAI allows
 * 2048, Gemini 100) and at most `maxChars` characters in all, so it stays under the providers' limit on
 * tokens per request (OpenAI: 300 000 summed across inputs). A text longer than `maxChars` goes alone.
 */

/**
 * Characters one request may carry: 400 000 is under 300 000 tokens even for text of 1.3 characters a
 * token (code, non-Latin scripts), and English runs about 4.
 */
export const MAX_BATCH_CHARS = 400_000;

/** One request's inputs: `texts` are the inputs `start`, `start + 1`, … of the whole list. */
export interface Batch {
  start: number;
  texts: string[];
}

export function planBatches(
  texts: readonly string[],
  maxCount: number,
  maxChars: number = MAX_BATCH_CHARS,
): Batch[] {
  const count = Math.max(1, Math.floor(maxCount));
  const batches: Batch[] = [];
  let current: Batch | undefined;
  let chars = 0;
  texts.forEach((text, index) => {
    if (!current || current.texts.length >= count || (chars + text.length > maxChars && chars > 0)) {
      current = { start: index, texts: [] };
      batches.push(current);
      chars = 0;
    }
    current.texts.push(text);
    chars += text.length;
  });
  return batches;
}
