import type { z } from "zod";
import type { ItemType } from "./model.ts";
import type { Aggregated, MigrationReport, reportItem } from "./schema.ts";

export type ItemStatus = "migrated" | "unchanged" | "would_write" | "would_keep";

export type ReportItem = z.infer<typeof reportItem>;

export function summarize(report: Omit<MigrationReport, "summary">): MigrationReport["summary"] {
  const byType: MigrationReport["summary"]["byType"] = {};
  const count = (type: ItemType, field: "migrated" | "skipped") => {
    byType[type] ??= { migrated: 0, skipped: 0 };
    (byType[type] as { migrated: number; skipped: number })[field]++;
  };
  for (const item of report.items) count(item.type, "migrated");
  for (const item of report.skipped) count(item.type, "skipped");
  return {
    migrated: report.items.filter((item) => item.status === "migrated" || item.status === "would_write")
      .length,
    unchanged: report.items.filter((item) => item.status === "unchanged").length,
    skipped: report.skipped.length,
    flagged: report.flags.length,
    errors: report.errors.length,
    byType,
  };
}

type Totals = { migrated: number; skipped: number; errors: number };

/** Every report's counts added up, by framework and by type. */
export function aggregate(reports: MigrationReport[]): Aggregated {
  const aggregated: Aggregated = {
    reports: reports.length,
    totals: { migrated: 0, skipped: 0, errors: 0 },
    byFramework: {},
    byType: {},
  };
  for (const report of reports) {
    const { migrated, skipped, errors } = report.summary;
    aggregated.byFramework[report.framework] ??= {
      runs: 0,
      migrated: 0,
      skipped: 0,
      errors: 0,
    };
    const framework = aggregated.byFramework[report.framework] as Totals & { runs: number };
    framework.runs++;
    framework.migrated += migrated;
    framework.skipped += skipped;
    framework.errors += errors;
    aggregated.totals.migrated += migrated;
    aggregated.totals.skipped += skipped;
    aggregated.totals.errors += errors;
    for (const [type, counts] of Object.entries(report.summary.byType) as Array<
      [ItemType, { migrated: number; skipped: number }]
    >) {
      aggregated.byType[type] ??= { migrated: 0, skipped: 0 };
      const total = aggregated.byType[type] as { migrated: number; skipped: number };
      total.migrated += counts.migrated;
      total.skipped += counts.skipped;
    }
  }
  return aggregated;
}

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** The reports as Markdown: totals, by framework, by type, then each run's skipped items and errors. */
export function toMarkdown(reports: MigrationReport[]): string {
  const aggregated = aggregate(reports);
  const lines = [
    "# Migration report",
    "",
    `${aggregated.reports} migration run(s): ${aggregated.totals.migrated} migrated, ${aggregated.totals.skipped} skipped, ${aggregated.totals.errors} errors.`,
    "",
    "## By framework",
    "",
    "| Framework | Runs | Migrated | Skipped | Errors |",
    "|---|---|---|---|---|",
    ...Object.entries(aggregated.byFramework).map(
      ([name, t]) => `| ${name} | ${t?.runs} | ${t?.migrated} | ${t?.skipped} | ${t?.errors} |`,
    ),
    "",
    "## By type",
    "",
    "| Type | Migrated | Skipped |",
    "|---|---|---|",
    ...Object.entries(aggregated.byType).map(([type, t]) => `| ${type} | ${t?.migrated} | ${t?.skipped} |`),
  ];
  for (const report of reports) {
    lines.push(
      "",
      `## ${report.id}${report.dryRun ? " (dry run)" : ""}`,
      "",
      `From \`${report.configPath}\`${report.version ? ` (version ${report.version})` : ""}.`,
      "",
    );
    if (report.items.length) {
      lines.push("| Type | Name | File | Status |", "|---|---|---|---|");
      for (const item of report.items)
        lines.push(`| ${item.type} | ${cell(item.name)} | ${cell(item.path)} | ${item.status} |`);
    }
    if (report.skipped.length) {
      lines.push("", "Skipped:", "");
      for (const item of report.skipped)
        lines.push(`- ${item.type} ${cell(item.name)}: ${cell(item.reason)}`);
    }
    if (report.flags.length) {
      lines.push("", "To check:", "");
      for (const flag of report.flags) lines.push(`- ${flag.type} ${cell(flag.name)}: ${cell(flag.message)}`);
    }
    if (report.errors.length) {
      lines.push("", "Errors:", "");
      for (const error of report.errors)
        lines.push(`- ${error.file ? `${error.file}: ` : ""}${cell(error.message)}`);
    }
  }
  return `${lines.join("\n")}\n`;
}
