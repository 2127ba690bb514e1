import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { systemCall } from "../../engine/system-call.ts";
import type { TriggerFn } from "../../engine/types.ts";
import { nowIso } from "../../shared/clock.ts";
import { AppError } from "../../shared/errors.ts";
import { READERS } from "./frameworks/index.ts";
import { type Framework, MigrationInputError, type SourceProject } from "./model.ts";
import { planMigration } from "./plan.ts";
import { listDirectory } from "./project-files.ts";
import { type ReportItem, summarize } from "./report.ts";
import type { MigrationReport } from "./schema.ts";
import { classify, type WriteTargets, writeFiles } from "./write.ts";

export interface RunDeps extends WriteTargets {
  trigger: TriggerFn;
}

/**
 * One migration: read the project, plan our files, and (unless a dry run) store its secrets in the
 * vault, write the files, record the report and load the files into the service.
 */
export async function migrate(
  deps: RunDeps,
  framework: Framework,
  configPath: string,
  dryRun: boolean,
): Promise<MigrationReport> {
  const startedAt = nowIso();
  const id = `${framework}-${startedAt.replace(/[:.]/g, "-")}`;
  let project: SourceProject;
  try {
    project = await READERS[framework].read(configPath);
  } catch (error) {
    if (error instanceof MigrationInputError) throw new AppError("unprocessable", error.message);
    throw error;
  }
  const models = await systemCall(deps.trigger, "catalog::models", { limit: 500 });
  const functions = await systemCall(deps.trigger, "engine::functions::list", {});
  const plan = planMigration(project, {
    models: new Set(models.models.map((model) => model.id)),
    functions: new Set(functions.functions.map((fn) => fn.function_id)),
  });
  const classified = classify(deps, framework, plan.files);
  const kept = classified.filter((entry) => entry.action === "keep");
  const skipped = [
    ...plan.skipped,
    ...kept.map(({ file }) => ({
      type: file.type,
      name: file.name,
      reason: `${file.path} exists and was not written by a ${framework} migration: kept as it is (rename one of them)`,
      source: file.source,
    })),
  ];
  const existing = new Set(
    (await systemCall(deps.trigger, "vault::list", {})).keys.map((secret) => secret.key),
  );
  const secrets = plan.secrets.map((secret) => ({
    ...secret,
    status: dryRun
      ? ("would_store" as const)
      : existing.has(secret.vaultName)
        ? ("kept" as const)
        : ("stored" as const),
  }));
  let items: ReportItem[];
  let loaded: unknown;
  if (dryRun) {
    items = classified
      .filter((entry) => entry.action !== "keep")
      .map(({ file, action }) => ({
        type: file.type,
        name: file.name,
        path: file.path,
        status: action === "same" ? "unchanged" : "would_write",
        source: file.source,
      }));
  } else {
    for (const secret of secrets.filter((entry) => entry.status === "stored"))
      await systemCall(deps.trigger, "vault::set", { key: secret.vaultName, value: secret.value });
    const written = writeFiles(
      deps,
      classified.filter((entry) => entry.action === "write"),
      id,
    );
    const same = classified
      .filter((entry) => entry.action === "same")
      .map(({ file }) => ({
        type: file.type,
        name: file.name,
        path: file.path,
        status: "unchanged" as const,
        source: file.source,
      }));
    items = [...written, ...same];
    loaded = await systemCall(deps.trigger, "config::reload", {});
  }
  const body = {
    id,
    framework,
    configPath: project.configPath,
    version: project.version,
    dryRun,
    startedAt,
    finishedAt: nowIso(),
    items,
    skipped,
    flags: plan.flags,
    secrets: secrets.map(({ vaultName, source, status }) => ({ vaultName, source, status })),
    errors: skipped
      .filter((item) => /is not valid|could not be parsed/.test(item.reason))
      .map((item) => ({ file: item.source, message: item.reason })),
    ...(loaded === undefined ? {} : { loaded }),
  };
  const report: MigrationReport = { ...body, summary: summarize(body) };
  if (!dryRun) {
    mkdirSync(join(deps.dataDir, "migrations"), { recursive: true });
    writeFileSync(join(deps.dataDir, "migrations", `${id}.json`), `${JSON.stringify(report, null, 2)}\n`);
  }
  return report;
}

/** Every stored report, oldest first. */
export function readReports(dataDir: string): MigrationReport[] {
  const dir = join(dataDir, "migrations");
  const names = listDirectory(dir).filter((name) => name.endsWith(".json"));
  const reports: MigrationReport[] = [];
  for (const name of names) {
    try {
      reports.push(JSON.parse(readFileSync(join(dir, name), "utf8")) as MigrationReport);
    } catch {
      // A report that cannot be read is left out of the totals, not a reason to fail them all.
    }
  }
  return reports.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
}
