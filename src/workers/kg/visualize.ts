import { inverseType } from "./inverse.ts";
import type { EntityVersion } from "./schema.ts";

/** Mermaid flowchart text of these entities and their relations among `shown` (labels escaped). */
export function mermaidOf(versions: EntityVersion[], shown: Set<string>): string {
  const ids = new Map<string, string>();
  const idOf = (entity: string) => {
    let id = ids.get(entity);
    if (!id) {
      id = `n${ids.size}`;
      ids.set(entity, id);
    }
    return id;
  };
  const label = (text: string) => text.replace(/["<>]/g, (c) => `#${c.charCodeAt(0)};`);
  // Versions carry the inverses of relations towards them: an arrow is drawn once, from the source's side.
  const mirrors = new Set(
    versions.flatMap((version) =>
      version.relations.map(
        (relation) => `${relation.target}\u0001${inverseType(relation.type)}\u0001${version.entity}`,
      ),
    ),
  );
  const lines = ["graph LR"];
  for (const entity of shown) lines.push(`  ${idOf(entity)}["${label(entity)}"]`);
  for (const version of versions) {
    for (const relation of version.relations) {
      if (!shown.has(relation.target)) continue;
      if (mirrors.has(`${version.entity}\u0001${relation.type}\u0001${relation.target}`)) continue;
      lines.push(`  ${idOf(version.entity)} -->|"${label(relation.type)}"| ${idOf(relation.target)}`);
    }
  }
  return lines.join("\n");
}
