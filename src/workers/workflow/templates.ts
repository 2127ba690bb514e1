/**
 * `{{name}}` becomes the variable's value (objects as JSON); a variable that does not exist stays as
 * written, braces included, so a literal `{{…}}` in a prompt survives.
 */
export function renderTemplate(template: string, vars: Record<string, unknown>): string {
  return template.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (whole, name: string) =>
    Object.hasOwn(vars, name) ? asText(vars[name]) : whole,
  );
}

/** A value as prompt text: strings as they are, everything else as JSON. */
export function asText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined) return "";
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return String(value);
  }
}

/** Case-insensitive substring test on the text form of an output (conditions and `until`). */
export function outputContains(output: unknown, needle: string): boolean {
  return asText(output).toLowerCase().includes(needle.toLowerCase());
}
