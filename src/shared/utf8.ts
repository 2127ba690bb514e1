const encoder = new TextEncoder();

/**
 * The text's longest head of at most `maxBytes` bytes of UTF-8, cut between characters (never half a
 * surrogate pair): limits on stored or sent text are in bytes, and a cut by characters passed them for
 * any script but Latin.
 */
export function utf8Head(text: string, maxBytes: number): string {
  // Three bytes a UTF-16 unit at most: such a text fits whole without encoding it.
  if (text.length * 3 <= maxBytes) return text;
  // encodeInto writes whole characters only: `read` ends between two.
  const { read } = encoder.encodeInto(text, new Uint8Array(maxBytes));
  return text.slice(0, read);
}
