import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { badRequest } from "../../../shared/errors.ts";
import { agentIdField, pathField } from "../fields.ts";
import { resolveInside, shown } from "../sandbox.ts";
import { defineTool } from "../tool.ts";
import { writeInside } from "../workspace-fs.ts";
import {
  applyEdits,
  type Diagnostic,
  type DocumentSymbol,
  diagnosticsAnswer,
  editsByUri,
  type Location,
  locationList,
  oneBased,
  positionOf,
  symbolsAnswer,
  type WorkspaceEdit,
} from "./lsp-protocol.ts";
import { readText, withServer } from "./lsp-session.ts";

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

/** Locations as workspace paths with their line's text; one outside the workspace is named by file only. */
async function located(root: string, found: Location[] | Location | null) {
  const texts = new Map<string, string[]>();
  return Promise.all(
    locationList(found).map(async (location) => {
      const full = fileURLToPath(location.uri);
      const position = oneBased(location.range.start);
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
  actsFor: "agent",
  description:
    "Compiler errors and warnings for a file from its language server (TypeScript/JavaScript, Python, Go, Rust): {diagnostics: [{line, column, severity, code, message}]}.",
  input: z.strictObject({ agentId: agentIdField, path: pathField() }),
  run: ({ agentId, path }, ctx) =>
    withServer(ctx, agentId, path, async ({ client, uri, capabilities }) => {
      let items: Diagnostic[];
      // Pull diagnostics where the server offers them; else wait for the ones it publishes on open.
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
      return { path, diagnostics: diagnosticsAnswer(items) };
    }),
});

const lspSymbols = defineTool({
  id: "tool::lsp_symbols",
  actsFor: "agent",
  description:
    "The symbols a file declares (functions, classes, variables, …) with where they are: {symbols: [{name, kind, line, column, container}]}.",
  input: z.strictObject({ agentId: agentIdField, path: pathField() }),
  run: ({ agentId, path }, ctx) =>
    withServer(ctx, agentId, path, async ({ client, uri }) => {
      const found =
        (await client.request<DocumentSymbol[] | null>("textDocument/documentSymbol", {
          textDocument: { uri },
        })) ?? [];
      return { path, symbols: symbolsAnswer(found) };
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
    actsFor: "agent",
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
  actsFor: "agent",
  description:
    "Rename a symbol everywhere in your workspace, as the language server resolves it (give line/column or the symbol's name): {files: [{path, edits}]}.",
  input: z.strictObject({ ...positionInput, newName: z.string().min(1).max(500) }),
  risky: true,
  run: (input, ctx) =>
    withServer(ctx, input.agentId, input.path, async ({ client, uri, root, text }) => {
      const edit = await client.request<WorkspaceEdit | null>("textDocument/rename", {
        textDocument: { uri },
        position: positionOf(text, input),
        newName: input.newName,
      });
      const byUri = editsByUri(edit);
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

export const lspTools = [lspDiagnostics, lspSymbols, lspReferences, lspGotoDefinition, lspRename];
