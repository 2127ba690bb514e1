import { extname, join } from "node:path";
import { badRequest } from "../../../shared/errors.ts";
import { findExecutable } from "../../../shared/process/supervise.ts";
import { SAFE_PATH } from "../command.ts";
import { isExecutableWithin } from "./probe.ts";

/** A program (and its arguments for one file) that formats or lints a kind of file. */
interface Runner {
  name: string;
  args: (file: string) => string[];
}

const JS = [".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".json", ".jsonc", ".css"];

const FORMATTERS: Array<{ exts: string[]; runners: Runner[] }> = [
  {
    exts: [...JS, ".md", ".html", ".yaml", ".yml"],
    runners: [
      { name: "biome", args: (file) => ["format", "--write", file] },
      { name: "prettier", args: (file) => ["--write", file] },
    ],
  },
  {
    exts: [".py"],
    runners: [
      { name: "ruff", args: (file) => ["format", file] },
      { name: "black", args: (file) => ["-q", file] },
    ],
  },
  { exts: [".rs"], runners: [{ name: "rustfmt", args: (file) => [file] }] },
  { exts: [".go"], runners: [{ name: "gofmt", args: (file) => ["-w", file] }] },
  { exts: [".sh", ".bash"], runners: [{ name: "shfmt", args: (file) => ["-w", file] }] },
];

const LINTERS: Array<{ exts: string[]; runners: Runner[] }> = [
  {
    exts: JS,
    runners: [
      { name: "biome", args: (file) => ["lint", "--reporter=json", file] },
      { name: "eslint", args: (file) => ["--format", "json", file] },
    ],
  },
  {
    exts: [".py"],
    runners: [
      { name: "ruff", args: (file) => ["check", "--output-format", "json", file] },
      { name: "pylint", args: (file) => ["--output-format=json", file] },
    ],
  },
  { exts: [".go"], runners: [{ name: "go", args: (file) => ["vet", file] }] },
  { exts: [".sh", ".bash"], runners: [{ name: "shellcheck", args: (file) => ["-f", "json", file] }] },
];

/**
 * The first runner for the file's kind that is installed: the workspace's own node_modules/.bin first
 * (the project's pinned version), then the system's directories. None: an error naming what to install.
 */
async function find(kind: "formatter" | "linter", table: typeof FORMATTERS, root: string, file: string) {
  const ext = extname(file).toLowerCase();
  const entry = table.find((candidate) => candidate.exts.includes(ext));
  if (!entry) throw badRequest(`No ${kind} is known for ${ext || "files without an extension"}`);
  for (const runner of entry.runners) {
    // Looked up inside the workspace only: a planted link must not make this probe the host.
    const bin = join("node_modules", ".bin", runner.name);
    const local = join(root, bin);
    if (await isExecutableWithin(root, bin))
      return { name: runner.name, executable: local, args: runner.args(file) };
    const system = findExecutable(runner.name, SAFE_PATH);
    if (system) return { name: runner.name, executable: system, args: runner.args(file) };
  }
  const names = entry.runners.map((runner) => runner.name).join(" or ");
  throw badRequest(
    `No ${kind} for ${ext} files is installed: install ${names} (looked in your workspace's node_modules/.bin and ${SAFE_PATH})`,
  );
}

export const findFormatter = (root: string, file: string) => find("formatter", FORMATTERS, root, file);
export const findLinter = (root: string, file: string) => find("linter", LINTERS, root, file);

/** Programs code_test may start. */
export const TEST_RUNNERS = [
  "npm",
  "npx",
  "node",
  "bun",
  "deno",
  "python3",
  "python",
  "pytest",
  "cargo",
  "go",
  "make",
];
