import { resolve } from "node:path";
import { callService } from "./service-call.ts";

/** The frameworks `agentos migrate <framework>` migrates: each has its function migrate::<framework>. */
export const MIGRATION_FRAMEWORKS = [
  "openclaw",
  "langchain",
  "langgraph",
  "crewai",
  "autogen",
  "openfang",
] as const;
export type MigrationFramework = (typeof MIGRATION_FRAMEWORKS)[number];

const out = (line = "") => process.stdout.write(`${line}\n`);
const pad = (text: string, width: number) => text.padEnd(width);

function table(rows: string[][]): void {
  const widths =
    rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length))) ?? [];
  for (const [index, row] of rows.entries()) {
    out(
      row
        .map((cell, column) => pad(cell, widths[column] ?? 0))
        .join("  ")
        .trimEnd(),
    );
    if (index === 0) out(widths.map((width) => "-".repeat(width)).join("  "));
  }
}

export async function migrateScan(directory: string | undefined, options: { json?: boolean }): Promise<void> {
  const baseDir = directory ? resolve(directory) : undefined;
  const query = baseDir ? `?baseDir=${encodeURIComponent(baseDir)}` : "";
  const result = await callService(
    { method: "GET", path: `/api/migrate/scan${query}` },
    "migrate::scan",
    baseDir ? { baseDir } : {},
  );
  if (options.json) {
    out(JSON.stringify(result, null, 2));
    return;
  }
  table([
    ["framework", "found", "version", "configuration"],
    ...result.frameworks.map((entry) => [
      entry.framework,
      entry.detected ? "yes" : "no",
      entry.version ?? "",
      entry.configPath ?? "",
    ]),
  ]);
  out();
  out(`${result.summary.found} of ${result.summary.scanned} frameworks found.`);
}

/** Runs one migration and prints a line per item, then the summary by type. */
export async function migrateFramework(
  framework: MigrationFramework,
  path: string,
  options: { dryRun?: boolean },
): Promise<void> {
  const body = { configPath: resolve(path), dryRun: Boolean(options.dryRun) };
  const report = await callService(
    { method: "POST", path: `/api/migrate/${framework}`, body },
    `migrate::${framework}` as const,
    body,
  );
  out(
    `${report.dryRun ? "Dry run of" : "Migrated"} ${framework} from ${report.configPath}${report.version ? ` (version ${report.version})` : ""}`,
  );
  out();
  const verb: Record<string, string> = {
    migrated: "wrote",
    unchanged: "unchanged",
    would_write: "would write",
    would_keep: "would keep",
  };
  for (const item of report.items)
    out(
      `  ${pad(verb[item.status] ?? item.status, 11)} ${pad(item.type, 8)} ${pad(item.name, 24)} ${item.path}`,
    );
  for (const item of report.skipped)
    out(`  ${pad("skipped", 11)} ${pad(item.type, 8)} ${pad(item.name, 24)} ${item.reason}`);
  for (const flag of report.flags)
    out(`  ${pad("check", 11)} ${pad(flag.type, 8)} ${pad(flag.name, 24)} ${flag.message}`);
  for (const secret of report.secrets)
    out(
      `  ${pad(secret.status.replace("_", " "), 11)} ${pad("secret", 8)} ${secret.vaultName} (in the vault, not in a file)`,
    );
  for (const error of report.errors) out(`  ${pad("error", 11)} ${error.message}`);
  out();
  table([
    ["type", "migrated", "skipped"],
    ...Object.entries(report.summary.byType).map(([type, counts]) => [
      type,
      String(counts.migrated),
      String(counts.skipped),
    ]),
  ]);
  out();
  out(
    `${report.summary.migrated} ${report.dryRun ? "to write" : "written"}, ${report.summary.unchanged} unchanged, ${report.summary.skipped} skipped, ${report.summary.errors} errors.${report.dryRun ? " Nothing was written." : ` Report: migrations/${report.id}.json in the data directory.`}`,
  );
}

export async function migrateReport(options: { format?: string }): Promise<void> {
  const format = options.format === "markdown" ? "markdown" : "json";
  const result = await callService(
    { method: "GET", path: `/api/migrate/report?format=${format}` },
    "migrate::report",
    { format },
  );
  out(
    format === "markdown"
      ? ("markdown" in result ? result.markdown : "").trimEnd()
      : JSON.stringify(result, null, 2),
  );
}
