import { homedir } from "node:os";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { requireAdmin } from "../../shared/access.ts";
import { badRequest } from "../../shared/errors.ts";
import { READERS } from "./frameworks/index.ts";
import { FRAMEWORKS } from "./model.ts";
import { allowedRoots, checkReadable } from "./paths.ts";
import { aggregate, toMarkdown } from "./report.ts";
import { migrate, readReports } from "./run.ts";
import { scan } from "./scan.ts";
import {
  migrateInput,
  migrationReport,
  reportInput,
  reportsAnswer,
  scanAnswer,
  scanInput,
} from "./schema.ts";

export interface MigrateOptions {
  /** AGENTOS_HOME: where the written files go and are loaded from. */
  home: string;
  /** AGENTOS_DATA_DIR: reports and session history. */
  dataDir: string;
  /** AGENTOS_MIGRATE_ROOTS: more directories a migration may read (path-delimiter separated). */
  extraRoots?: string;
}

/** Migration from six agent frameworks into the service's declarative files, then loaded (admin only). */
export function registerMigrate(worker: WorkerClient, options: MigrateOptions): void {
  const trigger = worker.trigger.bind(worker);
  const roots = allowedRoots(options.home, options.extraRoots);

  worker.registerFunction(
    {
      id: "migrate::scan",
      description:
        "Look for the six frameworks' configuration in baseDir and the directories directly inside it: {frameworks: [{framework, detected, configPath, version, migratable}], summary}",
      input: scanInput,
      output: scanAnswer,
    },
    ({ baseDir }, ctx) => {
      requireAdmin(ctx);
      return scan(checkReadable(baseDir ?? homedir(), roots, "baseDir"));
    },
  );

  for (const framework of FRAMEWORKS) {
    worker.registerFunction(
      {
        id: `migrate::${framework}`,
        description: `Migrate a ${framework} project: {dryRun, configPath} → the report (files written or that would be, skipped with why, secrets stored in the vault, what loading did)`,
        input: migrateInput,
        output: migrationReport,
      },
      async ({ dryRun, configPath }, ctx) => {
        requireAdmin(ctx);
        const path = configPath ?? READERS[framework].detect(homedir())?.configPath;
        if (!path)
          throw badRequest(
            `configPath: no ${framework} configuration found in ${homedir()}; name the file or project directory`,
          );
        return migrate(
          { trigger, home: options.home, dataDir: options.dataDir },
          framework,
          checkReadable(path, roots),
          dryRun,
        );
      },
    );
    worker.registerRoute(`migrate::${framework}`, "POST", `/api/migrate/${framework}`);
  }

  worker.registerFunction(
    {
      id: "migrate::report",
      description:
        "Every migration's report added up: {markdown} or {reports, aggregated: {reports, totals, byFramework, byType}}",
      input: reportInput,
      output: reportsAnswer,
    },
    ({ format }, ctx) => {
      requireAdmin(ctx);
      const reports = readReports(options.dataDir);
      if (format === "markdown") return { markdown: toMarkdown(reports) };
      return {
        reports: reports.map(({ id, framework, configPath, startedAt, dryRun, summary }) => ({
          id,
          framework,
          configPath,
          startedAt,
          dryRun,
          summary,
        })),
        aggregated: aggregate(reports),
      };
    },
  );
  worker.registerRoute("migrate::scan", "GET", "/api/migrate/scan");
  worker.registerRoute("migrate::report", "GET", "/api/migrate/report");
}
