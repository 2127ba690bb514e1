import { pathToFileURL } from "node:url";
import { existingInside } from "../sandbox.ts";
import type { ToolContext } from "../tool.ts";
import { readInside } from "../workspace-fs.ts";
import { LspClient } from "./lsp-client.ts";
import { languageServerFor } from "./lsp-servers.ts";
import { isFileWithin } from "./probe.ts";
import { sourceFiles } from "./sources.ts";

/**
 * A language server session for one tool call: the file's server started in the agent's sandbox,
 * initialized on the workspace, the file opened; stopped when the call ends or is aborted. Nothing
 * is kept between calls: each starts its own server.
 */
export interface Session {
  client: LspClient;
  root: string;
  file: string;
  uri: string;
  text: string;
  capabilities: Record<string, unknown>;
}

/** Starts the file's language server in the workspace, opens the file, runs `work`, and stops the server. */
export async function withServer<T>(
  ctx: ToolContext,
  agentId: string,
  path: string,
  work: (session: Session) => Promise<T>,
): Promise<T> {
  const root = await ctx.workspace(agentId);
  const file = await existingInside(root, path);
  const server = await languageServerFor(root, file);
  // Started as every confined program is: held to the workspace quota while it runs.
  const attached = await ctx.sandbox.attach({
    workspace: root,
    executable: server.executable,
    args: server.args,
  });
  const client = new LspClient(attached, {
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
      let opened = Buffer.byteLength(text);
      for (const other of await sourceFiles(root, MAX_OPENED)) {
        if (opened >= MAX_OPENED_BYTES) break;
        const otherServer = other === file ? null : await languageServerFor(root, other).catch(() => null);
        if (otherServer?.name !== server.name) continue;
        // One too large to send is left out, as the server would see it without a project file.
        const otherText = await readText(root, other).catch(() => null);
        if (otherText === null) continue;
        opened += Buffer.byteLength(otherText);
        const document = {
          uri: pathToFileURL(other).href,
          languageId: otherServer.languageId,
          version: 1,
          text: otherText,
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
const MiB = 1024 * 1024;
/**
 * The largest file sent to a language server (as JSON, control characters take six times as much), and
 * all the workspace's other files opened for it together: what a call makes the service hold for a
 * server, which may be the workspace's own program, stays bounded whatever the workspace holds.
 */
export const MAX_DOCUMENT_BYTES = 4 * MiB;
const MAX_OPENED_BYTES = 32 * MiB;
export const readText = async (root: string, file: string) =>
  (await readInside(root, file, MAX_DOCUMENT_BYTES)).toString("utf8");
const PROJECT_FILES = [
  "tsconfig.json",
  "jsconfig.json",
  "pyproject.toml",
  "pyrightconfig.json",
  "go.mod",
  "Cargo.toml",
];

/** Looked up inside the workspace only: a planted link must not make this probe the host. */
async function hasProjectFile(root: string): Promise<boolean> {
  const found = await Promise.all(PROJECT_FILES.map((name) => isFileWithin(root, name)));
  return found.includes(true);
}
