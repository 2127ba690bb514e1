/**
 * A reply in parts of at most `max` characters: cut at the last space before the limit (else a hard
 * cut), each part trimmed, empty parts dropped, at most `maxParts` (the last one then ends with "…").
 */
export function splitReply(text: string, max: number, maxParts = Number.POSITIVE_INFINITY): string[] {
  const parts: string[] = [];
  let rest = text.trim();
  while (rest.length > 0) {
    if (rest.length <= max) {
      parts.push(rest);
      break;
    }
    const space = rest.lastIndexOf(" ", max);
    const cut = space > 0 ? space : max;
    const part = rest.slice(0, cut).trim();
    if (part) parts.push(part);
    rest = rest.slice(cut).trim();
  }
  if (parts.length > maxParts) {
    const kept = parts.slice(0, maxParts);
    const last = kept[maxParts - 1] as string;
    kept[maxParts - 1] = `${last.slice(0, max - 1)}…`;
    return kept;
  }
  return parts;
}
