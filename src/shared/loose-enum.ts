import { z } from "zod";

/**
 * An enum matched case-insensitively and normalised to its canonical spelling: callers spell statuses
 * both ways (pulse asks for `active`, the spec writes `Active`), and neither should be refused.
 */
export function looseEnum<const T extends readonly string[]>(field: string, values: T) {
  const canonical = new Map(values.map((value) => [value.toLowerCase(), value]));
  return z.string({ error: `${field} must be a string` }).transform((value, ctx) => {
    const match = canonical.get(value.trim().toLowerCase());
    if (match === undefined) {
      ctx.addIssue({ code: "custom", message: `${field} must be one of ${values.join(", ")}` });
      return z.NEVER;
    }
    return match as T[number];
  });
}
