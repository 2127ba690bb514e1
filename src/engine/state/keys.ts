/**
 * The smallest string greater than every string that starts with `prefix`, in code point order
 * (which is UTF-8 byte order, the order of SQLite BINARY and PostgreSQL "C" collation).
 * Null when no such bound exists (the prefix is all U+10FFFF).
 */
export function prefixUpperBound(prefix: string): string | null {
  const points = Array.from(prefix);
  while (points.length > 0) {
    const last = points.pop() as string;
    const code = last.codePointAt(0) as number;
    if (code < 0x10ffff) {
      // Skip the surrogate block: lone surrogates are not valid scalar values in UTF-8.
      const next = code + 1 === 0xd800 ? 0xe000 : code + 1;
      return points.join("") + String.fromCodePoint(next);
    }
  }
  return null;
}

export function encodeCursor(lastKey: string): string {
  return Buffer.from(lastKey, "utf8").toString("base64url");
}

/** The key a cursor names, or null for anything state::list did not hand out (or no backend can hold). */
export function decodeCursor(cursor: string): string | null {
  if (!/^[A-Za-z0-9_-]*$/.test(cursor)) return null;
  const key = Buffer.from(cursor, "base64url").toString("utf8");
  return encodeCursor(key) === cursor && !key.includes("\u0000") ? key : null;
}

/**
 * The distinct scopes of a state table, in order, by an index skip-scan: one primary-key lookup per
 * scope instead of reading every row (SQLite and PostgreSQL both run this form).
 */
export function distinctScopesSql(table: string): string {
  return `WITH RECURSIVE scopes(scope) AS (
      SELECT MIN(scope) FROM ${table}
      UNION ALL
      SELECT (SELECT MIN(scope) FROM ${table} WHERE scope > scopes.scope) FROM scopes WHERE scopes.scope IS NOT NULL
    ) SELECT scope FROM scopes WHERE scope IS NOT NULL`;
}
