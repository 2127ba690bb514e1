import { badRequest } from "./errors.ts";

/**
 * `{{name}}` or `{{name.field.0}}`: a variable, then dotted steps into objects and arrays. `\{{` is the
 * literal text `{{` (group 1), so a prompt can show braces while unknown variables are refused at create.
 */
const TEMPLATE = /(\\\{\{)|\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_-]+)*)\s*\}\}/g;
const WHOLE_TEMPLATE = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_-]+)*)\s*\}\}$/;

const MISSING = Symbol("missing");

/** The value at a dotted path (own properties only, array indexes by number), or MISSING. */
function lookup(vars: Record<string, unknown>, path: string): unknown {
  let current: unknown = vars;
  for (const segment of path.split(".")) {
    if (typeof current !== "object" || current === null || !Object.hasOwn(current, segment)) return MISSING;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

/**
 * `{{name}}` and `{{name.path}}` become the value (objects as JSON); a variable or path that does not
 * exist stays as written, braces included (a workflow refuses unknown variables at create, but a path
 * into a value is only known at run time). `\{{` renders as `{{`.
 */
export function renderTemplate(template: string, vars: Record<string, unknown>): string {
  let total = template.length;
  // A value named again is written out again, but made into text once.
  const texts = new Map<unknown, string>();
  return template.replace(TEMPLATE, (whole, escaped: string | undefined, path: string) => {
    if (escaped) return "{{";
    const value = lookup(vars, path);
    if (value === MISSING) return whole;
    let text = texts.get(value);
    if (text === undefined) {
      text = asText(value);
      texts.set(value, text);
    }
    total += text.length;
    if (total > MAX_RENDERED_CHARS) {
      throw badRequest(
        `a template would render to more than ${MAX_RENDERED_CHARS} characters of text: name smaller parts of the values`,
      );
    }
    return text;
  });
}

/**
 * The most text one template renders to. Each `{{name}}` inside a longer string is written out whole
 * (objects as JSON), so a hundred of them over a 9 MB step output built a gigabyte string (past V8's
 * limit: a 500, after seconds of the service's thread) before anything could refuse it.
 */
export const MAX_RENDERED_CHARS = 10_000_000;

/**
 * A step's `args` with every string leaf rendered. A leaf that is exactly one template takes the
 * value itself, type included (`"{{input.limit}}"` → 20, an object stays an object); any other string
 * is rendered as text.
 */
export function renderArgs(args: unknown, vars: Record<string, unknown>): unknown {
  if (typeof args === "string") {
    const whole = WHOLE_TEMPLATE.exec(args);
    if (whole) {
      const value = lookup(vars, whole[1] as string);
      return value === MISSING ? args : value;
    }
    return renderTemplate(args, vars);
  }
  if (Array.isArray(args)) return args.map((item) => renderArgs(item, vars));
  if (typeof args === "object" && args !== null) {
    return Object.fromEntries(Object.entries(args).map(([key, value]) => [key, renderArgs(value, vars)]));
  }
  return args;
}

/** The variables a template or `args` names (their first segment), to tell a user which are unknown. */
export function templateVariables(value: unknown): string[] {
  const names = new Set<string>();
  const visit = (item: unknown) => {
    if (typeof item === "string") {
      for (const match of item.matchAll(TEMPLATE)) if (match[2]) names.add(match[2].split(".")[0] as string);
    } else if (Array.isArray(item)) item.forEach(visit);
    else if (typeof item === "object" && item !== null) Object.values(item).forEach(visit);
  };
  visit(value);
  return [...names];
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
