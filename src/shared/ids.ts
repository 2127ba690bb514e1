import { randomUUID } from "node:crypto";

/** The one id generator: `<prefix>-<uuid>` (spec formats such as `realm-<uuid>`, `run-<uuid>`). */
export function newId(prefix?: string): string {
  const id = randomUUID();
  return prefix ? `${prefix}-${id}` : id;
}
