// Lists the import circles in src/ (type-only imports included): `node scripts/import-cycles.ts`.
// test/architecture/imports.test.ts holds the tree to none, and to the one rule between workers.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
// `import … from "x"`, `export … from "x"`, `import "x"` and `import("x")`.
const SPECIFIER =
  /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|(?:^|[\s;])import\s*\(?\s*["']([^"']+)["']/g;

/** Every .ts/.tsx file below `dir`, relative to the repository. */
export function sourceFiles(dir = join(ROOT, "src")): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
    .sort();
}

/** The module specifiers a source text names. */
export function specifiersOf(text: string): string[] {
  return [...text.matchAll(SPECIFIER)].map((match) => (match[1] ?? match[2]) as string);
}

/** The files of this repository a source file imports (relative specifiers only). */
export function importsOf(file: string, text = readFileSync(join(ROOT, file), "utf8")): string[] {
  const found = new Set<string>();
  for (const specifier of specifiersOf(text)) {
    if (!specifier.startsWith(".")) continue;
    const target = relative(ROOT, resolve(ROOT, dirname(file), specifier));
    if (existsSync(join(ROOT, target))) found.add(target);
  }
  return [...found].sort();
}

/** The strongly connected groups of more than one file (or a file importing itself): Tarjan's. */
export function importCycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node) as number, low.get(target) as number));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node) as number, index.get(target) as number));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      group.push(member);
    } while (member !== node);
    if (group.length > 1 || graph.get(node)?.includes(node)) cycles.push(group.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return cycles;
}

/** The import graph of src/. */
export const sourceGraph = (): Map<string, string[]> =>
  new Map(sourceFiles().map((file) => [file, importsOf(file)]));

if (import.meta.main) {
  const cycles = importCycles(sourceGraph());
  for (const cycle of cycles) console.log(cycle.join("\n  ↔ "), "\n");
  console.log(`${cycles.length} import circle(s) in src/`);
}
