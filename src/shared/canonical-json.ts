/**
 * Canonical JSON: object keys sorted by code unit, no whitespace, and otherwise what JSON.stringify
 * gives: `toJSON` is honoured (a Date becomes its ISO string), undefined/function/symbol members are
 * dropped and become null in arrays. Hash chains hash this form so that key order in storage never
 * changes a hash.
 */
export function canonicalJson(value: unknown): string {
  return encode(value, "") ?? "null";
}

function encode(input: unknown, key: string): string | undefined {
  let value = input;
  if (
    value !== null &&
    typeof value === "object" &&
    typeof (value as { toJSON?: unknown }).toJSON === "function"
  ) {
    value = (value as { toJSON(key: string): unknown }).toJSON(key);
  }
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) {
    return `[${value.map((item, index) => encode(item, String(index)) ?? "null").join(",")}]`;
  }
  const record = value as Record<string, unknown>;
  const members: string[] = [];
  for (const member of Object.keys(record).sort()) {
    const text = encode(record[member], member);
    if (text !== undefined) members.push(`${JSON.stringify(member)}:${text}`);
  }
  return `{${members.join(",")}}`;
}
