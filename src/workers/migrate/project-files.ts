import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { CHANNEL_VAULT_NAMES } from "../../channels/platforms.ts";
import { MigrationInputError, type SourceSecret } from "./model.ts";

const MAX_FILE_BYTES = 2_000_000;
const MAX_PYTHON_FILES = 300;
const SKIPPED_DIRS = new Set([
  ".git",
  ".venv",
  "venv",
  "env",
  "node_modules",
  "__pycache__",
  "site-packages",
  "dist",
  "build",
  ".tox",
]);

/**
 * A file's text, refusing what is not a readable regular file of reasonable size, and a file reached
 * through a symbolic link: a project is read from its real path (checkReadable), so a link anywhere below
 * is the project's own, and could point anywhere the service may read (its environment in /proc, keys in
 * its home) to land in a prompt a realm's keys can read.
 */
export function readText(file: string): string {
  let size: number;
  try {
    if (realpathSync(file) !== resolve(file)) {
      throw new MigrationInputError(file, "is reached through a symbolic link: links are not followed");
    }
    const stat = statSync(file);
    if (!stat.isFile()) throw new MigrationInputError(file, "is not a file");
    size = stat.size;
  } catch (error) {
    if (error instanceof MigrationInputError) throw error;
    throw new MigrationInputError(file, "does not exist or cannot be read");
  }
  if (size > MAX_FILE_BYTES) throw new MigrationInputError(file, `is larger than ${MAX_FILE_BYTES} bytes`);
  return readFileSync(file, "utf8");
}

/**
 * A directory's entries, sorted (readdir's order differs between file systems), or none when it
 * cannot be read: a migration reads what is there and reports what is missing elsewhere.
 */
export function listDirectory(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/** A JSON file, or a MigrationInputError naming the line of the first syntax error. */
export function readJsonFile(file: string): unknown {
  const text = readText(file);
  try {
    return JSON.parse(text);
  } catch (error) {
    const position = Number((error as Error).message.match(/position (\d+)/)?.[1]);
    const line = Number.isFinite(position) ? text.slice(0, position).split("\n").length : undefined;
    throw new MigrationInputError(file, `is not valid JSON: ${(error as Error).message}`, line);
  }
}

export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The project's Python files (virtual environments and caches left out), at most 300. */
export function pythonFiles(dir: string): string[] {
  const found: string[] = [];
  const walk = (current: string, depth: number) => {
    if (depth > 8 || found.length >= MAX_PYTHON_FILES) return;
    for (const entry of listDirectory(current)) {
      const path = join(current, entry);
      if (SKIPPED_DIRS.has(entry) || entry.startsWith(".")) continue;
      if (isDirectory(path)) walk(path, depth + 1);
      else if (entry.endsWith(".py") && found.length < MAX_PYTHON_FILES) found.push(path);
    }
  };
  walk(dir, 0);
  return found;
}

/** Environment variables that hold a provider's key, and the vault entry each one goes to. */
const PROVIDER_KEYS: Record<string, string> = {
  OPENAI_API_KEY: "provider:openai:api_key",
  ANTHROPIC_API_KEY: "provider:anthropic:api_key",
  GOOGLE_API_KEY: "provider:google:api_key",
  GEMINI_API_KEY: "provider:google:api_key",
  GROQ_API_KEY: "provider:groq:api_key",
  MISTRAL_API_KEY: "provider:mistral:api_key",
  DEEPSEEK_API_KEY: "provider:deepseek:api_key",
  OPENROUTER_API_KEY: "provider:openrouter:api_key",
  XAI_API_KEY: "provider:xai:api_key",
  COHERE_API_KEY: "provider:cohere:api_key",
  TOGETHER_API_KEY: "provider:together:api_key",
  DASHSCOPE_API_KEY: "provider:qwen:api_key",
};
const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD)$/i;

/** The vault entry for a secret-looking environment variable: a provider's key, else `env:<NAME>`. */
export function vaultNameForEnv(name: string): string | undefined {
  if (PROVIDER_KEYS[name]) return PROVIDER_KEYS[name];
  return SECRET_NAME.test(name) ? `env:${name}` : undefined;
}

/** Why a channel secret of the source is not stored: no adapter of ours would ever read it. */
export function unreadChannelSecret(platform: string): string {
  return CHANNEL_VAULT_NAMES.has(platform)
    ? `AgentOS's ${platform} adapter does not read it (events come by webhook, not over a socket or gateway connection): not stored`
    : `AgentOS has no ${platform} channel: not stored`;
}

/** A `.env` file's variables (KEY=value lines), with their line numbers. */
export function dotEnv(file: string): Map<string, { value: string; line: number }> {
  const variables = new Map<string, { value: string; line: number }>();
  if (!existsSync(file)) return variables;
  readText(file)
    .split(/\r?\n/)
    .forEach((line, index) => {
      const match = line.match(/^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)\s*$/);
      if (!match) return;
      const value = (match[2] as string).replace(/^(['"])(.*)\1$/, "$2").trim();
      if (value) variables.set(match[1] as string, { value, line: index + 1 });
    });
  return variables;
}

/** The secrets of a `.env` file; other variables are left where they are. */
export function envFileSecrets(file: string): SourceSecret[] {
  const secrets: SourceSecret[] = [];
  for (const [name, { value, line }] of dotEnv(file)) {
    const vaultName = vaultNameForEnv(name);
    if (vaultName) secrets.push({ vaultName, value, source: `${file}:${line}` });
  }
  return secrets;
}

/**
 * The version of `packageName` the project pins or requires, from requirements*.txt, pyproject.toml,
 * uv.lock or poetry.lock (the first that names it).
 */
export function pythonPackageVersion(dir: string, packageName: string): string | undefined {
  const name = packageName.replace(/[-_.]/g, "[-_.]");
  const lockPattern = new RegExp(`name\\s*=\\s*"${name}"\\s*\\n\\s*version\\s*=\\s*"([^"]+)"`, "i");
  const requirement = new RegExp(
    `(?:^|["'\\s])${name}(?:\\[[^\\]]*\\])?\\s*(?:==|>=|~=|<=|>|<|\\^)?\\s*v?([0-9][0-9A-Za-z.*+-]*)`,
    "im",
  );
  for (const file of ["uv.lock", "poetry.lock"]) {
    const path = join(dir, file);
    if (!existsSync(path)) continue;
    const match = readText(path).match(lockPattern);
    if (match) return match[1];
  }
  const candidates = [
    "pyproject.toml",
    ...listDirectory(dir).filter((entry) => /^requirements.*\.txt$/.test(entry)),
  ];
  for (const file of candidates) {
    const path = join(dir, file);
    if (!existsSync(path)) continue;
    const match = readText(path).match(requirement);
    if (match) return match[1];
  }
  return undefined;
}

/** Does the project depend on `packageName` at all (a version or not)? */
export function dependsOn(dir: string, packageName: string): boolean {
  const name = new RegExp(
    `(?:^|["'\\s])${packageName.replace(/[-_.]/g, "[-_.]")}(?:\\[|[\\s"'=<>~^;,]|$)`,
    "im",
  );
  return [
    "pyproject.toml",
    ...listDirectory(dir).filter((entry) => /^requirements.*\.txt$/.test(entry)),
  ].some((file) => {
    const path = join(dir, file);
    return existsSync(path) && name.test(readText(path));
  });
}

export const shown = (root: string, file: string) => relative(root, file) || basename(file);
