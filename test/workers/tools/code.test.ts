import { cpSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { analyzeSource } from "../../../src/workers/tools/code/analyze.ts";
import { workspaceDir } from "../../../src/workers/tools/sandbox.ts";
import { toolsServer } from "./setup.ts";

const env = toolsServer();

const SOURCE = `// adds two numbers
export function add(a: number, b: number): number {
  if (a > 0 && b > 0) return a + b;
  return a + b;
}

const total: string = add(1, 2);
export const again = add(total.length, 1);
`;

describe("code tools", () => {
  it("measures lines, comments, functions and complexity", async () => {
    await env.agent();
    await env.tool("tool::file_write", { path: "src/a.ts", content: SOURCE });
    await env.tool("tool::file_write", {
      path: "src/b.py",
      content: "# hi\ndef f(x):\n    if x:\n        return 1\n",
    });
    const result = await env.tool<{ totals: Record<string, number>; files: Array<Record<string, unknown>> }>(
      "tool::code_analyze",
      {},
    );
    expect(result.totals).toMatchObject({ files: 2, comments: 2, functions: 2 });
    expect(result.files.find((f) => f.path === "src/a.ts")).toMatchObject({
      language: "typescript",
      lines: 8,
      blank: 1,
      complexity: 3,
    });
  });

  it("measures Java lines built to backtrack its header pattern, on the service's own thread", () => {
    // 400 spaces and a letter held the thread for 20 s, and the time grew faster than the cube: 1 000
    // would outlast the test's own timeout many times over. Measured at once now.
    expect(analyzeSource("A.java", `${" ".repeat(1000)}a\n${"static ".repeat(3000)}!\n`)).toMatchObject({
      lines: 2,
    });
    const java = [
      "public class A {",
      "  public static void main(String[] args) {",
      "  private Map<String, List<Integer>> group(int a, int b) throws IOException {",
      "  void run() {",
      "    if (x) {",
      "}",
    ].join("\n");
    expect(analyzeSource("A.java", java).functions).toBe(3);
  });

  it("does not measure a file over 10 MB: refused by path, skipped and named in a directory", async () => {
    // Measuring is synchronous: ten calls at once on a 96 MB file held the service's thread for 3.5 s.
    const { agentId } = await env.agent();
    await env.tool("tool::file_write", { path: "src/small.ts", content: SOURCE });
    writeFileSync(join(workspaceDir(env.server.dataDir, agentId), "src", "big.ts"), "x;\n".repeat(4_000_000));
    expect(await env.failure("tool::code_analyze", { path: "src/big.ts" })).toMatchObject({
      status: 400,
      message: expect.stringContaining("larger than 10000000 bytes"),
    });
    const result = await env.tool<{ totals: Record<string, number>; skipped: string[] }>(
      "tool::code_analyze",
      {
        path: "src",
      },
    );
    expect(result).toMatchObject({ totals: { files: 1, lines: 8 }, skipped: ["src/big.ts"] });
  });

  it("runs tests with an allowed runner and reports whether they passed", async () => {
    await env.agent();
    await env.tool("tool::file_write", { path: "ok.js", content: "process.exit(0)" });
    await env.tool("tool::file_write", {
      path: "bad.js",
      content: "console.error('1 failing'); process.exit(1)",
    });
    expect(await env.tool("tool::code_test", { command: "node", args: ["ok.js"] })).toMatchObject({
      passed: true,
      exitCode: 0,
    });
    expect(await env.tool("tool::code_test", { command: "node", args: ["bad.js"] })).toMatchObject({
      passed: false,
      exitCode: 1,
      stderr: "1 failing\n",
    });
    expect((await env.failure("tool::code_test", { command: "rm", args: ["-rf", "."] })).message).toContain(
      "not on the allowlist",
    );
  });

  it("names the formatter to install when none is, and formats with the workspace's own", async () => {
    const { agentId } = await env.agent();
    await env.tool("tool::file_write", { path: "x.py", content: "x=1\n" });
    const missing = await env.failure("tool::code_format", { path: "x.py" });
    expect(missing.message).toMatch(/No formatter for \.py files is installed: install ruff or black/);
    // The workspace's node_modules/.bin is where a project keeps its formatter (a copy: a link out of the
    // workspace leads nowhere inside the sandbox).
    const modules = join(workspaceDir(env.server.dataDir, agentId), "node_modules");
    cpSync(resolve("node_modules/@biomejs"), join(modules, "@biomejs"), { recursive: true });
    mkdirSync(join(modules, ".bin"), { recursive: true });
    symlinkSync("../@biomejs/biome/bin/biome", join(modules, ".bin", "biome"));
    await env.tool("tool::file_write", { path: "f.ts", content: "const  x = {a:1}\n" });
    expect(await env.tool("tool::code_format", { path: "f.ts" })).toEqual({
      path: "f.ts",
      formatter: "biome",
      changed: true,
    });
    expect(await env.tool("tool::file_read", { path: "f.ts" })).toMatchObject({
      content: "const x = { a: 1 };\n",
    });
    const lint = await env.tool<{ linter: string; clean: boolean }>("tool::code_lint", { path: "f.ts" });
    expect(lint).toMatchObject({ linter: "biome" });
  });

  it("asks a real language server for diagnostics, symbols, references, definitions and renames", async () => {
    await env.agent();
    await env.tool("tool::file_write", { path: "src/a.ts", content: SOURCE });
    await env.tool("tool::file_write", {
      path: "src/use.ts",
      content: 'import { add } from "./a";\nexport const three = add(1, 2);\n',
    });
    const { diagnostics } = await env.tool<{
      diagnostics: Array<{ line: number; severity: string; message: string }>;
    }>("tool::lsp_diagnostics", { path: "src/a.ts" });
    expect(diagnostics).toContainEqual(
      expect.objectContaining({
        line: 7,
        severity: "error",
        message: "Type 'number' is not assignable to type 'string'.",
      }),
    );
    const { symbols } = await env.tool<{ symbols: Array<{ name: string; kind: string; line: number }> }>(
      "tool::lsp_symbols",
      { path: "src/a.ts" },
    );
    expect(symbols).toContainEqual(expect.objectContaining({ name: "add", kind: "function", line: 2 }));
    const { references } = await env.tool<{ references: Array<{ path: string; line: number }> }>(
      "tool::lsp_references",
      { path: "src/a.ts", symbol: "add" },
    );
    expect(references.map((r) => `${r.path}:${r.line}`).sort()).toEqual(
      expect.arrayContaining(["src/a.ts:2", "src/a.ts:7", "src/use.ts:2"]),
    );
    const { definitions } = await env.tool<{ definitions: Array<{ path: string; line: number }> }>(
      "tool::lsp_goto_definition",
      { path: "src/use.ts", line: 2, column: 22 },
    );
    expect(definitions).toEqual([expect.objectContaining({ path: "src/a.ts", line: 2 })]);
    const renamed = await env.tool<{ files: Array<{ path: string }> }>("tool::lsp_rename", {
      path: "src/a.ts",
      symbol: "add",
      newName: "sum",
    });
    expect(renamed.files.map((f) => f.path).sort()).toEqual(["src/a.ts", "src/use.ts"]);
    expect(await env.tool("tool::file_read", { path: "src/use.ts" })).toMatchObject({
      content: 'import { sum } from "./a";\nexport const three = sum(1, 2);\n',
    });
    expect((await env.failure("tool::lsp_symbols", { path: "src/b.rb" })).status).toBe(404);
    await env.tool("tool::file_write", { path: "x.rb", content: "def f; end\n" });
    expect((await env.failure("tool::lsp_symbols", { path: "x.rb" })).message).toContain(
      "No language server is known for .rb",
    );
  });
});
