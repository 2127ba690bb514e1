import { z } from "zod";
import { FRAMEWORKS, ITEM_TYPES } from "./model.ts";

export const scanInput = z.strictObject({
  baseDir: z
    .string()
    .min(1)
    .max(4096)
    .optional()
    .describe("default: the home directory of the user the service runs as"),
});

export const migrateInput = z.strictObject({
  dryRun: z
    .union([z.boolean(), z.enum(["true", "false"]).transform((value) => value === "true")])
    .default(false),
  configPath: z
    .string()
    .min(1)
    .max(4096)
    .optional()
    .describe("the framework's configuration file or project directory (default: where scan finds it)"),
});

export const reportInput = z.strictObject({ format: z.enum(["markdown", "json"]).default("json") });

/** What the migration routes answer. */
const framework = z.enum(FRAMEWORKS);
const itemType = z.enum(ITEM_TYPES);
const counts = z.object({ migrated: z.number(), skipped: z.number() });
const byType = z.partialRecord(itemType, counts);

export const scanEntry = z.object({
  framework,
  detected: z.boolean(),
  configPath: z.string().nullable(),
  version: z.string().nullable(),
  migratable: z.boolean(),
  /** Every place the framework was found (baseDir and its immediate subdirectories). */
  locations: z.array(z.string()),
});
export type ScanEntry = z.infer<typeof scanEntry>;
export const scanAnswer = z.object({
  frameworks: z.array(scanEntry),
  summary: z.object({ scanned: z.number(), found: z.number(), migratable: z.number() }),
});

export const reportItem = z.object({
  type: itemType,
  name: z.string(),
  path: z.string(),
  status: z.enum(["migrated", "unchanged", "would_write", "would_keep"]),
  source: z.string().optional(),
});
const reportSummary = z.object({
  migrated: z.number(),
  unchanged: z.number(),
  skipped: z.number(),
  flagged: z.number(),
  errors: z.number(),
  byType,
});
export const migrationReport = z.object({
  id: z.string(),
  framework,
  configPath: z.string(),
  version: z.string().optional(),
  dryRun: z.boolean(),
  startedAt: z.string(),
  finishedAt: z.string(),
  summary: reportSummary,
  items: z.array(reportItem),
  skipped: z.array(
    z.object({ type: itemType, name: z.string(), reason: z.string(), source: z.string().optional() }),
  ),
  flags: z.array(z.object({ type: itemType, name: z.string(), message: z.string() })),
  /** Vault entries, never their values. */
  secrets: z.array(
    z.object({
      vaultName: z.string(),
      source: z.string(),
      status: z.enum(["stored", "kept", "would_store"]),
    }),
  ),
  errors: z.array(z.object({ file: z.string().optional(), message: z.string() })),
  /** What loading the written files did (a real run only). */
  loaded: z.unknown().optional(),
});
export type MigrationReport = z.infer<typeof migrationReport>;

const totals = z.object({ migrated: z.number(), skipped: z.number(), errors: z.number() });
export const aggregated = z.object({
  reports: z.number(),
  totals,
  byFramework: z.partialRecord(framework, totals.extend({ runs: z.number() })),
  byType,
});
export type Aggregated = z.infer<typeof aggregated>;
export const reportsAnswer = z.union([
  z.object({ markdown: z.string() }),
  z.object({
    reports: z.array(
      migrationReport.pick({
        id: true,
        framework: true,
        configPath: true,
        startedAt: true,
        dryRun: true,
        summary: true,
      }),
    ),
    aggregated,
  }),
]);
