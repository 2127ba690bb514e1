import { z } from "zod";

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
