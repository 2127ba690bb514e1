import { type Document, isScalar, LineCounter, parseDocument, visit, YAMLParseError } from "yaml";

/**
 * Bytes of a declarative or imported YAML file (a workflow, a migrated project's agents and tasks) parsed
 * at most. These are parsed on the thread that serves every request, at about a megabyte a second: a
 * workflow or a crew's agents are a few kilobytes, and this keeps the longest parse short.
 */
export const MAX_YAML_FILE_BYTES = 256 * 1024;

/**
 * A YAML file's document, its problems in `errors` (as the yaml package reports them), or an Error when
 * the text is over MAX_YAML_FILE_BYTES. Keys are checked unique here, in one pass over each mapping: the
 * package's own check compares every key of a mapping with every other (a 500 kB mapping held the
 * service for half a minute). Aliases are expanded only when the document becomes a value, where the
 * package refuses more than 100 of them.
 */
export function parseYamlFile(text: string, lineCounter = new LineCounter()): Document {
  if (text.length > MAX_YAML_FILE_BYTES || Buffer.byteLength(text) > MAX_YAML_FILE_BYTES)
    throw new Error(`is larger than ${MAX_YAML_FILE_BYTES / 1024} KiB of YAML`);
  const document = parseDocument(text, { lineCounter, uniqueKeys: false });
  if (document.errors.length === 0) {
    const duplicate = firstDuplicateKey(document);
    if (duplicate !== undefined) {
      const { line, col } = lineCounter.linePos(duplicate);
      document.errors.push(
        new YAMLParseError(
          [duplicate, duplicate + 1],
          "DUPLICATE_KEY",
          `Map keys must be unique at line ${line}, column ${col}`,
        ),
      );
    }
  }
  return document;
}

/** Where the first key that repeats one of its mapping's stands (scalar keys, as the package compares them). */
function firstDuplicateKey(document: Document): number | undefined {
  let found: number | undefined;
  visit(document, {
    Map(_, map) {
      const seen = new Set<unknown>();
      for (const { key } of map.items) {
        if (!isScalar(key)) continue;
        if (seen.has(key.value)) {
          found = key.range?.[0] ?? 0;
          return visit.BREAK;
        }
        seen.add(key.value);
      }
      return undefined;
    },
  });
  return found;
}
