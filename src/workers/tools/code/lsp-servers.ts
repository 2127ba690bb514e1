import { access, constants, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, extname, join, relative } from "node:path";
import { badRequest } from "../../../shared/errors.ts";
import { findExecutable } from "../../../shared/process/supervise.ts";
import { SAFE_PATH } from "../command.ts";
import { readInside } from "../workspace-fs.ts";
import { isExecutableWithin } from "./probe.ts";

export interface LanguageServer {
  name: string;
  executable: string;
  args: string[];
  languageId: string;
}

const TS_IDS: Record<string, string> = {
  ".ts": "typescript",
  ".mts": "typescript",
  ".cts": "typescript",
  ".tsx": "typescriptreact",
  ".js": "javascript",
  ".mjs": "javascript",
  ".cjs": "javascript",
  ".jsx": "javascriptreact",
};

const OTHERS: Array<{
  exts: string[];
  languageId: string;
  servers: Array<{ name: string; args: string[] }>;
}> = [
  {
    exts: [".py"],
    languageId: "python",
    servers: [
      { name: "pyright-langserver", args: ["--stdio"] },
      { name: "pylsp", args: [] },
    ],
  },
  { exts: [".go"], languageId: "go", servers: [{ name: "gopls", args: [] }] },
  { exts: [".rs"], languageId: "rust", servers: [{ name: "rust-analyzer", args: [] }] },
];

/**
 * A TypeScript install's tsc when it is TypeScript 7 or later, whose tsc speaks LSP (`--lsp --stdio`).
 * The workspace's own is read without following links (a program may have planted one, or a FIFO).
 */
async function nativeTsc(packageDir: string, root: string | null): Promise<string | null> {
  try {
    const manifest = join(packageDir, "package.json");
    const text = root
      ? (await readInside(root, manifest, 1_000_000)).toString("utf8")
      : await readFile(manifest, "utf8");
    const { version } = JSON.parse(text) as { version: string };
    if (Number(version.split(".")[0]) < 7) return null;
    const tsc = join(packageDir, "bin", "tsc");
    // The workspace's is looked up inside it only (a planted link must not make this probe the host).
    if (root) return (await isExecutableWithin(root, relative(root, tsc))) ? tsc : null;
    await access(tsc, constants.X_OK);
    return tsc;
  } catch {
    return null;
  }
}

function ownTypescript(): string | null {
  try {
    return dirname(createRequire(import.meta.url).resolve("typescript/package.json"));
  } catch {
    return null;
  }
}

/**
 * The language server for a file: for TypeScript and JavaScript the workspace's own TypeScript 7+, else
 * the service's, else typescript-language-server; for Python pyright or pylsp; gopls; rust-analyzer.
 * None installed: an error naming what to install.
 */
export async function languageServerFor(root: string, file: string): Promise<LanguageServer> {
  const ext = extname(file).toLowerCase();
  const tsId = TS_IDS[ext];
  if (tsId) {
    const candidates: Array<[string | null, string | null]> = [
      [join(root, "node_modules", "typescript"), root],
      [ownTypescript(), null],
    ];
    for (const [dir, inside] of candidates) {
      const tsc = dir ? await nativeTsc(dir, inside) : null;
      if (tsc) return { name: "tsc --lsp", executable: tsc, args: ["--lsp", "--stdio"], languageId: tsId };
    }
    const tls = findExecutable("typescript-language-server", SAFE_PATH);
    if (tls)
      return { name: "typescript-language-server", executable: tls, args: ["--stdio"], languageId: tsId };
    throw badRequest(
      "No TypeScript language server is installed: add typescript@7 (or typescript-language-server) to your workspace",
    );
  }
  const family = OTHERS.find((candidate) => candidate.exts.includes(ext));
  if (!family)
    throw badRequest(
      `No language server is known for ${ext || "files without an extension"} (known: TypeScript, JavaScript, Python, Go, Rust)`,
    );
  for (const server of family.servers) {
    const executable = findExecutable(server.name, SAFE_PATH);
    if (executable)
      return { name: server.name, executable, args: server.args, languageId: family.languageId };
  }
  throw badRequest(
    `No language server for ${ext} files is installed: install ${family.servers.map((s) => s.name).join(" or ")}`,
  );
}
