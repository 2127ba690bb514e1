import { extname } from "node:path";

/** Comment and function syntax per language family. */
const LANGUAGES: Record<string, { name: string; line: string[]; block?: [string, string]; fn: RegExp }> = {
  ".ts": {
    name: "typescript",
    line: ["//"],
    block: ["/*", "*/"],
    fn: /\bfunction\b|=>|^\s*(async\s+)?[A-Za-z_$][\w$]*\s*\([^)]*\)\s*(:\s*[^={]+)?\{/,
  },
  ".js": {
    name: "javascript",
    line: ["//"],
    block: ["/*", "*/"],
    fn: /\bfunction\b|=>|^\s*(async\s+)?[A-Za-z_$][\w$]*\s*\([^)]*\)\s*\{/,
  },
  ".py": { name: "python", line: ["#"], fn: /^\s*(async\s+)?def\s+\w+/ },
  ".go": { name: "go", line: ["//"], block: ["/*", "*/"], fn: /^\s*func\b/ },
  ".rs": { name: "rust", line: ["//"], block: ["/*", "*/"], fn: /\bfn\s+\w+/ },
  ".java": {
    name: "java",
    line: ["//"],
    block: ["/*", "*/"],
    // The modifiers are taken whole, once (a lookahead and its backreference are never backtracked
    // into): "(static|\s)*" before a run that also takes them backtracked for minutes on one line.
    fn: /^\s*(?=((?:(?:public|private|protected|static)\s+)*))\1[\w<>[\],\s]+\s+\w+\s*\([^)]*\)\s*(throws [\w, ]+)?\s*\{/,
  },
  ".rb": { name: "ruby", line: ["#"], fn: /^\s*def\s+\w+/ },
  ".sh": { name: "shell", line: ["#"], fn: /^\s*(function\s+\w+|\w+\s*\(\)\s*\{)/ },
  ".c": { name: "c", line: ["//"], block: ["/*", "*/"], fn: /^[\w*\s]+\s+\**\w+\s*\([^;]*\)\s*\{?\s*$/ },
};
for (const [alias, of] of [
  [".tsx", ".ts"],
  [".mts", ".ts"],
  [".cts", ".ts"],
  [".jsx", ".js"],
  [".mjs", ".js"],
  [".cjs", ".js"],
  [".h", ".c"],
  [".cpp", ".c"],
  [".hpp", ".c"],
  [".cc", ".c"],
  [".kt", ".java"],
  [".bash", ".sh"],
] as const) {
  LANGUAGES[alias] = LANGUAGES[of] as (typeof LANGUAGES)[string];
}

export const isSource = (path: string): boolean => extname(path).toLowerCase() in LANGUAGES;

/**
 * The longest line tried as a function header. The header patterns backtrack, polynomially in a line's
 * length, on the service's own thread: a long line (minified code, or one written to stall the service)
 * is counted as code without being tried. Real headers are far shorter.
 */
const MAX_HEADER_LENGTH = 500;

const BRANCHES = /\b(if|elif|else if|for|while|case|catch|except|when)\b|&&|\|\||\?\s*[^:.?]/g;

export interface FileMetrics {
  language: string;
  lines: number;
  code: number;
  comments: number;
  blank: number;
  functions: number;
  /** Decision points + 1 (McCabe's cyclomatic complexity of the file as a whole). */
  complexity: number;
}

export function analyzeSource(path: string, text: string): FileMetrics {
  const language = LANGUAGES[extname(path).toLowerCase()];
  const metrics: FileMetrics = {
    language: language?.name ?? "unknown",
    lines: 0,
    code: 0,
    comments: 0,
    blank: 0,
    functions: 0,
    complexity: 1,
  };
  if (text === "") return metrics;
  let inBlock = false;
  for (const raw of text.replace(/\n$/, "").split("\n")) {
    metrics.lines++;
    const line = raw.trim();
    if (inBlock) {
      metrics.comments++;
      if (language?.block && line.includes(language.block[1])) inBlock = false;
      continue;
    }
    if (line === "") metrics.blank++;
    else if (language?.line.some((mark) => line.startsWith(mark))) metrics.comments++;
    else if (language?.block && line.startsWith(language.block[0])) {
      metrics.comments++;
      inBlock = !line.includes(language.block[1], language.block[0].length);
    } else {
      metrics.code++;
      // The trimmed line: leading whitespace only gives the patterns more ways to backtrack.
      if (line.length <= MAX_HEADER_LENGTH && language?.fn.test(line)) metrics.functions++;
      metrics.complexity += raw.match(BRANCHES)?.length ?? 0;
    }
  }
  return metrics;
}
