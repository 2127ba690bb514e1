import { badRequest } from "../../../shared/errors.ts";

/**
 * Language Server Protocol ↔ tool answers, pure: LSP's 0-based positions and numeric kinds become
 * the 1-based lines and names a model reads, and file URIs are mapped between the workspace as this
 * service sees it and as the sandboxed server does. The session (lsp-session.ts) and the tools
 * (lsp.ts) do the I/O.
 */

export interface Position {
  line: number;
  character: number;
}
export interface Range {
  start: Position;
  end: Position;
}
export interface Location {
  uri: string;
  range: Range;
}
export interface Diagnostic {
  range: Range;
  severity?: number;
  code?: string | number;
  source?: string;
  message: string;
}
/** A DocumentSymbol (hierarchical) or a SymbolInformation (flat, with a location): servers send either. */
export interface DocumentSymbol {
  name: string;
  kind: number;
  range?: Range;
  selectionRange?: Range;
  location?: Location;
  children?: DocumentSymbol[];
  containerName?: string;
}
export interface TextEdit {
  range: Range;
  newText: string;
}
export interface WorkspaceEdit {
  changes?: Record<string, TextEdit[]>;
  documentChanges?: Array<{ textDocument: { uri: string }; edits: TextEdit[] }>;
}

/** LSP DiagnosticSeverity and SymbolKind, by number (1-based, so index 0 is unused). */
const SEVERITIES = ["", "error", "warning", "information", "hint"];
const SYMBOL_KINDS = [
  "",
  "file",
  "module",
  "namespace",
  "package",
  "class",
  "method",
  "property",
  "field",
  "constructor",
  "enum",
  "interface",
  "function",
  "variable",
  "constant",
  "string",
  "number",
  "boolean",
  "array",
  "object",
  "key",
  "null",
  "enum member",
  "struct",
  "event",
  "operator",
  "type parameter",
];

/** An LSP position as the tools answer it: 1-based line and column. */
export const oneBased = (position: Position) => ({ line: position.line + 1, column: position.character + 1 });

/** The LSP position of the request: line/column, or the first whole-word occurrence of `symbol`. */
export function positionOf(
  text: string,
  input: { line?: number; column?: number; symbol?: string },
): Position {
  if (input.line !== undefined) return { line: input.line - 1, character: (input.column ?? 1) - 1 };
  if (!input.symbol) throw badRequest("give line (and column) or symbol");
  const escaped = escapeRegExp(input.symbol);
  const lines = text.split("\n");
  for (let line = 0; line < lines.length; line++) {
    const match = new RegExp(`(?<![\\w$])${escaped}(?![\\w$])`).exec(lines[line] as string);
    if (match) return { line, character: match.index };
  }
  throw badRequest(`symbol ${input.symbol} does not occur in the file`);
}

export function diagnosticsAnswer(items: Diagnostic[]) {
  return items.map((d) => ({
    ...oneBased(d.range.start),
    severity: SEVERITIES[d.severity ?? 1] ?? "error",
    code: d.code ?? null,
    source: d.source ?? null,
    message: d.message,
  }));
}

export interface SymbolAnswer {
  name: string;
  kind: string;
  line: number;
  column: number;
  container: string | null;
}

/** The symbols, nested ones after their parent, each named with its container. */
export function symbolsAnswer(found: DocumentSymbol[]): SymbolAnswer[] {
  const symbols: SymbolAnswer[] = [];
  const walk = (list: DocumentSymbol[], container: string | null) => {
    for (const symbol of list) {
      const start = (symbol.selectionRange ?? symbol.range ?? symbol.location?.range)?.start ?? {
        line: 0,
        character: 0,
      };
      symbols.push({
        name: symbol.name,
        kind: SYMBOL_KINDS[symbol.kind] ?? String(symbol.kind),
        ...oneBased(start),
        container: container ?? symbol.containerName ?? null,
      });
      walk(symbol.children ?? [], symbol.name);
    }
  };
  walk(found, null);
  return symbols;
}

/** Definition and references answers come as one location, a list, or null: always a list here. */
export function locationList(found: Location[] | Location | null): Location[] {
  return found === null ? [] : Array.isArray(found) ? found : [found];
}

/** A rename's edits per file URI, whether the server sent `changes`, `documentChanges` or both. */
export function editsByUri(edit: WorkspaceEdit | null): Map<string, TextEdit[]> {
  const byUri = new Map<string, TextEdit[]>(Object.entries(edit?.changes ?? {}));
  for (const change of edit?.documentChanges ?? [])
    byUri.set(change.textDocument.uri, [...(byUri.get(change.textDocument.uri) ?? []), ...change.edits]);
  return byUri;
}

/**
 * Text edits (LSP ranges) applied in one pass over the text: each piece of it is copied once. Edits may
 * not overlap (LSP forbids it); inserts at one position go in reverse order, as applying them from the
 * last to the first did. A language server can be the agent's own program: each offset is looked up,
 * not summed over the lines before it, and the text is not rebuilt per edit (20,000 edits on a
 * 20,000-line file held the service's thread for seconds).
 */
export function applyEdits(text: string, edits: TextEdit[]): string {
  const starts = [0];
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) starts.push(at + 1);
  const offset = (p: Position) =>
    (starts[Math.min(Math.max(p.line, 0), starts.length)] ?? text.length + 1) + p.character;
  const placed = edits
    .map((edit) => ({ start: offset(edit.range.start), end: offset(edit.range.end), text: edit.newText }))
    .sort((a, b) => b.start - a.start)
    .reverse();
  const pieces: string[] = [];
  let cursor = 0;
  for (const edit of placed) {
    if (edit.start < cursor || edit.end < edit.start)
      throw badRequest("The language server answered overlapping edits: nothing was changed");
    pieces.push(text.slice(cursor, edit.start), edit.text);
    cursor = edit.end;
  }
  pieces.push(text.slice(cursor));
  return pieces.join("");
}

/**
 * The workspace's file URI as this service knows it (`host`) and as the sandboxed server sees it
 * (`server`), swapped in whole messages. A URI counts only up to a boundary (`/`, `"`, `?`, `#` or the
 * end), so a sibling directory whose name starts the same (`/ws` and `/ws2`) is left alone.
 */
export function uriMapping(uris: { host: string; server: string }) {
  const boundary = '(?=[/"?#]|$)';
  const hostUri = new RegExp(escapeRegExp(uris.host) + boundary, "g");
  const serverUri = new RegExp(escapeRegExp(uris.server) + boundary, "g");
  return {
    toServer: (json: string) => json.replace(hostUri, () => uris.server),
    toHost: (json: string) => json.replace(serverUri, () => uris.host),
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
