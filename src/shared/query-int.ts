import { z } from "zod";

/**
 * An integer that may arrive as query-string text: a number, or a string of decimal digits. Anything
 * else (`true`, `1.5`, `1e3`, `""`, `0x10`) is a 400 naming the field, where `z.coerce` would read
 * `true` as 1 and `""` as 0.
 */
export function queryInt(field: string, min: number, max: number = Number.MAX_SAFE_INTEGER) {
  const range =
    max === Number.MAX_SAFE_INTEGER
      ? `${field} must be ${min} or more`
      : `${field} must be between ${min} and ${max}`;
  return z.preprocess(
    (value) => (typeof value === "string" && /^-?\d{1,16}$/.test(value) ? Number(value) : value),
    z
      .number({ error: `${field} must be an integer` })
      .int(`${field} must be an integer`)
      .min(min, range)
      .max(max, range),
  );
}
