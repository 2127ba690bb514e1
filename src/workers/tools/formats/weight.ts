/**
 * About a value's size as JSON text, counted only up to just past `limit`. An array or object reached
 * more than once (a YAML alias, a value jq shares between outputs) weighs its full size every time, as
 * it would when written out, but is walked once: its weight is kept in `sizes`.
 */
export function jsonWeight(value: unknown, limit: number, sizes = new WeakMap<object, number>()): number {
  if (typeof value === "string") return value.length + 2;
  if (value === null || typeof value !== "object") return 8;
  const known = sizes.get(value);
  if (known !== undefined) return known;
  let total = 2;
  if (Array.isArray(value)) {
    for (const item of value) {
      total += jsonWeight(item, limit, sizes) + 1;
      if (total > limit) break;
    }
  } else {
    for (const [key, item] of Object.entries(value)) {
      total += key.length + 4 + jsonWeight(item, limit, sizes);
      if (total > limit) break;
    }
  }
  sizes.set(value, total);
  return total;
}
