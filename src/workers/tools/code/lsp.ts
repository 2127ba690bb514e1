import { access } from "node:fs/promises";
import { basename, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { z } from "zod";
import { badRequest } from "../../../shared/errors.ts";
import { agentIdField, pathField } from "../fields.ts";
import { existingInside, resolveInside, shown } from "../sandbox.ts";
import { defineTool, type ToolContext } from "../tool.ts";
import { readInside, writeInside } from "../workspace-fs.ts";
import { LspClient } from "./lsp-client.ts";
import { languageServerFor } from "./lsp-servers.ts";
import { sourceFiles } from "./sources.ts";

interface Position {
  line: number;
  character: number;
}
interface Range {
  start: Position;
  end: Position;
}
interface Location {
  uri: string;
  range: Range;
}

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

interface Session {
  client: LspClient;
  root: string;
  file: string;
  uri: string;
  text: string;
  capabilities: Record<string, unknown>;
}

/** Starts the file's language server in the workspace, opens the file, runs `work`, and stops the server. */
async function withServer<T>(
  ctx: ToolContext,
  agentId: string,
  path: string,
  work: (session: Session) => Promise<T>,
): Promise<T> {
  const root = await ctx.workspace(agentId);
  const file = await existingInside(root, path);
  const server = await languageServerFor(root, file);
  const prepared = await ctx.sandbox.prepare({
    workspace: root,
    executable: server.executable,
    args: server.args,
  });
  const client = new LspClient(prepared, {
    host: pathToFileURL(root).href,
    server: pathToFileURL(ctx.sandbox.pathOf(root, root)).href,
  });
  const onAbort = () => void client.close();
  ctx.call.signal.addEventListener("abort", onAbort, { once: true });
  try {
    const rootUri = pathToFileURL(root).href;
    const init = await client.request<{ capabilities: Record<string, unknown> }>("initialize", {
      // The server cannot see this process (it has a process namespace of its own).
      processId: null,
      rootUri,
      workspaceFolders: [{ uri: rootUri, name: "workspace" }],
      capabilities: {
        textDocument: {
          documentSymbol: { hierarchicalDocumentSymbolSupport: true },
          publishDiagnostics: {},
          diagnostic: {},
          rename: { prepareSupport: false },
        },
        workspace: { workspaceEdit: { documentChanges: true } },
      },
    });
    client.notify("initialized", {});
    const text = await readText(root, file);
    const uri = pathToFileURL(file).href;
    client.notify("textDocument/didOpen", {
      textDocument: { uri, languageId: server.languageId, version: 1, text },
    });
    // Without a project file the server knows only open files: open the workspace's others of the kind too.
    if (!(await hasProjectFile(root))) {
      for (const other of await sourceFiles(root, MAX_OPENED)) {
        const otherServer = other === file ? null : await languageServerFor(root, other).catch(() => null);
        if (otherServer?.name !== server.name) continue;
        const document = {
          uri: pathToFileURL(other).href,
          languageId: otherServer.languageId,
          version: 1,
          text: await readText(root, other),
        };
        client.notify("textDocument/didOpen", { textDocument: document });
      }
    }
    return await work({ client, root, file, uri, text, capabilities: init.capabilities });
  } finally {
    ctx.call.signal.removeEventListener("abort", onAbort);
    await client.close();
  }
}

const MAX_OPENED = 300;
const readText = async (root: string, file: string) => (await readInside(root, file)).toString("utf8");
const PROJECT_FILES = [
  "tsconfig.json",
  "jsconfig.json",
  "pyproject.toml",
  "pyrightconfig.json",
  "go.mod",
  "Cargo.toml",
];

async function hasProjectFile(root: string): Promise<boolean> {
  const found = await Promise.all(
    PROJECT_FILES.map((name) =>
      access(join(root, name)).then(
        () => true,
        () => false,
      ),
    ),
  );
  return found.includes(true);
}

const positionInput = {
  agentId: agentIdField,
  path: pathField(),
  line: z.number().int().min(1).optional().describe("1-based line of the symbol"),
  column: z.number().int().min(1).optional().describe("1-based column of the symbol"),
  symbol: z
    .string()
    .min(1)
    .max(500)
    .optional()
    .describe("The symbol's name: its first occurrence in the file is used when line/column are not given"),
};

/** The LSP position of the request: line/column, or the first whole-word occurrence of `symbol`. */
function positionOf(text: string, input: { line?: number; column?: number; symbol?: string }): Position {
  if (input.line !== undefined) return { line: input.line - 1, character: (input.column ?? 1) - 1 };
  if (!input.symbol) throw badRequest("give line (and column) or symbol");
  const escaped = input.symbol.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const lines = text.split("\n");
  for (let line = 0; line < lines.length; line++) {
    const match = new RegExp(`(?<![\\w$])${escaped}(?![\\w$])`).exec(lines[line] as string);
    if (match) return { line, character: match.index };
  }
  throw badRequest(`symbol ${input.symbol} does not occur in the file`);
}

async function located(root: string, locations: Location[] | Location | null) {
  const list = locations === null ? [] : Array.isArray(locations) ? locations : [locations];
  const texts = new Map<string, string[]>();
  return Promise.all(
    list.map(async (location) => {
      const full = fileURLToPath(location.uri);
      const position = { line: location.range.start.line + 1, column: location.range.start.character + 1 };
      const inside = await resolveInside(root, full).then(
        (path) => path,
        () => null,
      );
      if (!inside) return { path: null, external: basename(full), ...position };
      if (!texts.has(full)) texts.set(full, (await readText(root, inside).catch(() => "")).split("\n"));
      return {
        path: shown(root, inside),
        ...position,
        text: (texts.get(full) as string[])[location.range.start.line]?.trim() ?? "",
      };
    }),
  );
}

const lspDiagnostics = defineTool({
  id: "tool::lsp_diagnostics",
  description:
    "Compiler errors and warnings for a file from its language server (TypeScript/JavaScript, Python, Go, Rust): {diagnostics: [{line, column, severity, code, message}]}.",
  input: z.strictObject({ agentId: agentIdField, path: pathField() }),
  run: ({ agentId, path }, ctx) =>
    withServer(ctx, agentId, path, async ({ client, uri, capabilities }) => {
      type Diagnostic = {
        range: Range;
        severity?: number;
        code?: string | number;
        source?: string;
        message: string;
      };
      let items: Diagnostic[] | null = null;
      if (capabilities.diagnosticProvider) {
        items =
          (
            await client.request<{ items?: Diagnostic[] }>("textDocument/diagnostic", {
              textDocument: { uri },
            })
          ).items ?? [];
      } else {
        const published = await client.waitFor<{ uri: string; diagnostics: Diagnostic[] }>(
          "textDocument/publishDiagnostics",
          (p) => p.uri === uri,
          15_000,
        );
        items = published?.diagnostics ?? [];
      }
      return {
        path,
        diagnostics: items.map((d) => ({
          line: d.range.start.line + 1,
          column: d.range.start.character + 1,
          severity: SEVERITIES[d.severity ?? 1] ?? "error",
          code: d.code ?? null,
          source: d.source ?? null,
          message: d.message,
        })),
      };
    }),
});

const lspSymbols = defineTool({
  id: "tool::lsp_symbols",
  description:
    "The symbols a file declares (functions, classes, variables, …) with where they are: {symbols: [{name, kind, line, column, container}]}.",
  input: z.strictObject({ agentId: agentIdField, path: pathField() }),
  run: ({ agentId, path }, ctx) =>
    withServer(ctx, agentId, path, async ({ client, uri }) => {
      type Symbol = {
        name: string;
        kind: number;
        range?: Range;
        selectionRange?: Range;
        location?: Location;
        children?: Symbol[];
        containerName?: string;
      };
      const found =
        (await client.request<Symbol[] | null>("textDocument/documentSymbol", { textDocument: { uri } })) ??
        [];
      const symbols: Array<{
        name: string;
        kind: string;
        line: number;
        column: number;
        container: string | null;
      }> = [];
      const walk = (list: Symbol[], container: string | null) => {
        for (const symbol of list) {
          const start = (symbol.selectionRange ?? symbol.range ?? symbol.location?.range)?.start ?? {
            line: 0,
            character: 0,
          };
          symbols.push({
            name: symbol.name,
            kind: SYMBOL_KINDS[symbol.kind] ?? String(symbol.kind),
            line: start.line + 1,
            column: start.character + 1,
            container: container ?? symbol.containerName ?? null,
          });
          walk(symbol.children ?? [], symbol.name);
        }
      };
      walk(found, null);
      return { path, symbols };
    }),
});

/** A tool that asks the server where something is at a position, answered as workspace locations. */
function locationTool(
  id: `tool::${string}`,
  description: string,
  method: string,
  field: string,
  extra: Record<string, unknown> = {},
) {
  return defineTool({
    id,
    description,
    input: z.strictObject(positionInput),
    run: (input, ctx) =>
      withServer(ctx, input.agentId, input.path, async ({ client, uri, root, text }) => {
        const found = await client.request<Location[] | Location | null>(method, {
          textDocument: { uri },
          position: positionOf(text, input),
          ...extra,
        });
        return { [field]: await located(root, found) };
      }),
  });
}

const lspReferences = locationTool(
  "tool::lsp_references",
  "Every reference to a symbol across your workspace (give line/column or the symbol's name): {references: [{path, line, column, text}]}.",
  "textDocument/references",
  "references",
  { context: { includeDeclaration: true } },
);

const lspGotoDefinition = locationTool(
  "tool::lsp_goto_definition",
  "Where a symbol is defined (give line/column or the symbol's name): {definitions: [{path, line, column, text}]}; definitions outside your workspace are named by file only.",
  "textDocument/definition",
  "definitions",
);

const lspRename = defineTool({
  id: "tool::lsp_rename",
  description:
    "Rename a symbol everywhere in your workspace, as the language server resolves it (give line/column or the symbol's name): {files: [{path, edits}]}.",
  input: z.strictObject({ ...positionInput, newName: z.string().min(1).max(500) }),
  risky: true,
  run: (input, ctx) =>
    withServer(ctx, input.agentId, input.path, async ({ client, uri, root, text }) => {
      type Edit = { range: Range; newText: string };
      const edit = await client.request<{
        changes?: Record<string, Edit[]>;
        documentChanges?: Array<{ textDocument: { uri: string }; edits: Edit[] }>;
      } | null>("textDocument/rename", {
        textDocument: { uri },
        position: positionOf(text, input),
        newName: input.newName,
      });
      const byUri = new Map<string, Edit[]>(Object.entries(edit?.changes ?? {}));
      for (const change of edit?.documentChanges ?? [])
        byUri.set(change.textDocument.uri, [...(byUri.get(change.textDocument.uri) ?? []), ...change.edits]);
      if (byUri.size === 0)
        throw badRequest(`Nothing to rename at ${input.path}${input.symbol ? ` (${input.symbol})` : ""}`);
      // Every file is checked before any is written: a rename that reaches outside the workspace changes nothing.
      const planned = await Promise.all(
        [...byUri].map(async ([fileUri, edits]) => ({
          full: await resolveInside(root, fileURLToPath(fileUri)),
          edits,
        })),
      );
      for (const { full, edits } of planned)
        await writeInside(root, full, applyEdits(await readText(root, full), edits));
      return { files: planned.map(({ full, edits }) => ({ path: shown(root, full), edits: edits.length })) };
    }),
});

/** Text edits (LSP ranges) applied from the last to the first, so earlier ranges stay valid. */
export function applyEdits(text: string, edits: Array<{ range: Range; newText: string }>): string {
  const lines = text.split("\n");
  const offset = (p: Position) =>
    lines.slice(0, p.line).reduce((sum, line) => sum + line.length + 1, 0) + p.character;
  const sorted = [...edits].sort((a, b) => offset(b.range.start) - offset(a.range.start));
  let result = text;
  for (const edit of sorted)
    result = result.slice(0, offset(edit.range.start)) + edit.newText + result.slice(offset(edit.range.end));
  return result;
}

export const lspTools = [lspDiagnostics, lspSymbols, lspReferences, lspGotoDefinition, lspRename];
