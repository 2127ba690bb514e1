import { TextDecoder } from "node:util";

/**
 * HTML to plain text, as the spec asks: script and style blocks removed, tags become spaces, a few
 * entities decoded, whitespace collapsed, trimmed. Every pattern consumes what it matches (an unclosed
 * block or tag runs to the end of the input), so the work stays linear on hostile input.
 */

/**
 * A script or style block, up to its closing tag or, when unclosed, the end of the input. A closing tag
 * with "<" in it (`</script/<script>`) does not count: when in doubt, too much is hidden, never script.
 */
const RAW_TEXT_BLOCK = /<(script|style)\b[\s\S]*?(?:<\/\1(?:[\s/][^<>]{0,256})?>|$)/gi;
/** Comments, up to `-->` or the end. */
const COMMENT = /<!--[\s\S]*?(?:-->|$)/g;
/** Tags, doctype and processing instructions; an unclosed one runs to the end. */
const TAG = /<[a-zA-Z/!?][^>]*(?:>|$)/g;
const ENTITY = /&(nbsp|amp|lt|gt|quot|apos|#39|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});/g;

const NAMED: Record<string, string> = {
  nbsp: " ",
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  "#39": "'",
};

function decodeEntity(match: string, name: string): string {
  const named = NAMED[name];
  if (named !== undefined) return named;
  const code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
  // Surrogates, NUL and values past Unicode are left as written.
  if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return match;
  return String.fromCodePoint(code);
}

export function htmlToText(html: string): string {
  return (
    html
      .replace(RAW_TEXT_BLOCK, " ")
      .replace(COMMENT, " ")
      .replace(TAG, " ")
      // One pass, so "&amp;lt;" becomes "&lt;", not "<".
      .replace(ENTITY, decodeEntity)
      .replace(/\s+/g, " ")
      .trim()
  );
}

/** The media type without parameters, lower case: "text/html; charset=UTF-8" → "text/html". */
export function mediaType(contentType: string): string {
  return contentType.split(";")[0].trim().toLowerCase();
}

export function isHtml(contentType: string): boolean {
  const type = mediaType(contentType);
  return type === "text/html" || type === "application/xhtml+xml";
}

/** The charset parameter of a Content-Type, lower case, or undefined. */
export function charsetOf(contentType: string): string | undefined {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType);
  return match ? match[1].toLowerCase() : undefined;
}

/**
 * Decodes a body in its declared charset (UTF-8 when none or unknown). A body cut short may end inside a
 * UTF-8 sequence; that partial character is dropped rather than shown as U+FFFD.
 */
export function decodeBody(body: Buffer, contentType: string, truncated: boolean): string {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charsetOf(contentType) ?? "utf-8");
  } catch {
    decoder = new TextDecoder("utf-8");
  }
  const bytes = truncated && decoder.encoding === "utf-8" ? body.subarray(0, utf8Boundary(body)) : body;
  return decoder.decode(bytes);
}

/** The length of the longest prefix of `bytes` that does not end inside a UTF-8 sequence. */
export function utf8Boundary(bytes: Uint8Array): number {
  const end = bytes.length;
  for (let start = end - 1; start >= 0 && start >= end - 4; start--) {
    const byte = bytes[start];
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return start + length > end ? start : end;
  }
  return end;
}
