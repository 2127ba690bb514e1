import { totalmem } from "node:os";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ZodError } from "zod";
import { ConfigError, loadConfig } from "../../../../src/config/env.ts";
import { sandboxSettings } from "../../../../src/shared/process/sandbox/settings.ts";

const MiB = 1024 * 1024;

const DEFAULTS = {
  enabled: true,
  runGroups: true,
  limits: {
    memoryBytes: 2048 * MiB,
    totalMemoryBytes: Math.floor(totalmem() / 2 / MiB) * MiB,
    cpuSeconds: 600,
    cpuWeightPercent: 25,
    cpuCores: null,
    processes: 512,
    fileBytes: 1024 * MiB,
    openFiles: 4096,
    tmpBytes: 512 * MiB,
    workspaceQuotaBytes: 2048 * MiB,
    diskReserveBytes: 512 * MiB,
  },
};

/** Each variable with a value inside its range, and what it sets. */
const VARIABLES = [
  ["AGENTOS_SANDBOX_MEMORY_MB", "memoryBytes", 64, 1024 * 1024, MiB],
  ["AGENTOS_SANDBOX_TOTAL_MEMORY_MB", "totalMemoryBytes", 64, 1024 * 1024 * 1024, MiB],
  ["AGENTOS_SANDBOX_CPU_SECONDS", "cpuSeconds", 1, 86_400, 1],
  ["AGENTOS_SANDBOX_CPU_WEIGHT", "cpuWeightPercent", 1, 100, 1],
  ["AGENTOS_SANDBOX_PROCESSES", "processes", 8, 100_000, 1],
  ["AGENTOS_SANDBOX_FILE_MB", "fileBytes", 1, 1024 * 1024, MiB],
  ["AGENTOS_SANDBOX_OPEN_FILES", "openFiles", 64, 1_048_576, 1],
  ["AGENTOS_SANDBOX_TMP_MB", "tmpBytes", 1, 1024 * 1024, MiB],
  ["AGENTOS_WORKSPACE_QUOTA_MB", "workspaceQuotaBytes", 1, 1024 * 1024 * 1024, MiB],
  ["AGENTOS_SANDBOX_DISK_RESERVE_MB", "diskReserveBytes", 0, 1024 * 1024 * 1024, MiB],
] as const;

function zodErrorOf(run: () => unknown): ZodError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ZodError);
    return error as ZodError;
  }
  throw new Error("expected a ZodError, nothing was thrown");
}

describe("sandboxSettings", () => {
  it("is on with the documented limits when nothing is set", () => {
    expect(sandboxSettings({})).toEqual(DEFAULTS);
  });

  it("ignores variables that are not its own", () => {
    expect(sandboxSettings({ PATH: "/usr/bin", AGENTOS_PORT: "x", AGENTOS_SANDBOXED: "no" })).toEqual(
      DEFAULTS,
    );
  });

  it("is off only when AGENTOS_SANDBOX=off, and on when it says on", () => {
    expect(sandboxSettings({ AGENTOS_SANDBOX: "off" }).enabled).toBe(false);
    expect(sandboxSettings({ AGENTOS_SANDBOX: "on" }).enabled).toBe(true);
    expect(sandboxSettings({ AGENTOS_SANDBOX: "off" }).limits).toEqual(DEFAULTS.limits);
  });

  it("treats a blank or missing value as the default", () => {
    const blank = Object.fromEntries(
      ["AGENTOS_SANDBOX", ...VARIABLES.map(([name]) => name)].map((name, index) => [
        name,
        ["", " ", "\t", "  \n"][index % 4],
      ]),
    );
    expect(sandboxSettings(blank)).toEqual(DEFAULTS);
    expect(sandboxSettings({ AGENTOS_SANDBOX_PROCESSES: undefined })).toEqual(DEFAULTS);
  });

  it.each(VARIABLES)("reads %s into limits.%s", (name, field, min, max, unit) => {
    fc.assert(
      fc.property(fc.integer({ min, max }), (value) => {
        expect(sandboxSettings({ [name]: String(value) }).limits[field]).toBe(value * unit);
      }),
    );
    expect(sandboxSettings({ [name]: ` ${min} ` }).limits[field]).toBe(min * unit);
  });

  it.each(VARIABLES)("refuses %s out of range or not a whole number, naming it", (name, _field, min, max) => {
    for (const bad of ["abc", String(min - 1), String(max + 1), "1.5", "-1", "0x", "NaN"]) {
      const error = zodErrorOf(() => sandboxSettings({ [name]: bad }));
      expect(error.issues.map(({ path }) => path.join("."))).toEqual([name]);
      expect(error.message).toContain(name);
    }
  });

  it("keeps a control group per run unless AGENTOS_SANDBOX_RUN_GROUPS=off", () => {
    expect(sandboxSettings({ AGENTOS_SANDBOX_RUN_GROUPS: "off" }).runGroups).toBe(false);
    expect(sandboxSettings({ AGENTOS_SANDBOX_RUN_GROUPS: "on" }).runGroups).toBe(true);
    expect(() => sandboxSettings({ AGENTOS_SANDBOX_RUN_GROUPS: "maybe" })).toThrow(
      /AGENTOS_SANDBOX_RUN_GROUPS/,
    );
  });

  it("refuses AGENTOS_SANDBOX other than on or off, naming it", () => {
    for (const bad of ["maybe", "OFF", "0", "false", "disabled"]) {
      const error = zodErrorOf(() => sandboxSettings({ AGENTOS_SANDBOX: bad }));
      expect(error.issues.map(({ path }) => path.join("."))).toEqual(["AGENTOS_SANDBOX"]);
      expect(error.message).toContain("AGENTOS_SANDBOX");
    }
  });

  it("reads AGENTOS_SANDBOX_CPU_CORES as cores, fractions too, and refuses what is not a positive number", () => {
    expect(sandboxSettings({ AGENTOS_SANDBOX_CPU_CORES: "1.5" }).limits.cpuCores).toBe(1.5);
    expect(sandboxSettings({ AGENTOS_SANDBOX_CPU_CORES: " 3 " }).limits.cpuCores).toBe(3);
    for (const bad of ["abc", "0", "-1", "0.001", "5000", "1,5"]) {
      const error = zodErrorOf(() => sandboxSettings({ AGENTOS_SANDBOX_CPU_CORES: bad }));
      expect(error.issues.map(({ path }) => path.join("."))).toEqual(["AGENTOS_SANDBOX_CPU_CORES"]);
      expect(error.message).toContain("AGENTOS_SANDBOX_CPU_CORES");
    }
  });

  it("refuses AGENTOS_SANDBOX_PROCESSES=abc", () => {
    expect(() => sandboxSettings({ AGENTOS_SANDBOX_PROCESSES: "abc" })).toThrow(/AGENTOS_SANDBOX_PROCESSES/);
  });
});

describe("loadConfig and the sandbox's variables", () => {
  it("refuses a bad AGENTOS_SANDBOX_MEMORY_MB at start with a ConfigError naming it", () => {
    for (const bad of ["lots", "63", "2048.5"]) {
      expect(() => loadConfig({ AGENTOS_SANDBOX_MEMORY_MB: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ AGENTOS_SANDBOX_MEMORY_MB: bad })).toThrow(/AGENTOS_SANDBOX_MEMORY_MB/);
    }
  });

  it("refuses a CPU weight above the service's (over 100 %) at start, naming it", () => {
    expect(() => loadConfig({ AGENTOS_SANDBOX_CPU_WEIGHT: "150" })).toThrow(/AGENTOS_SANDBOX_CPU_WEIGHT/);
    expect(() => loadConfig({ AGENTOS_SANDBOX_CPU_CORES: "none" })).toThrow(/AGENTOS_SANDBOX_CPU_CORES/);
  });

  it("refuses AGENTOS_SANDBOX=maybe with a ConfigError naming it", () => {
    expect(() => loadConfig({ AGENTOS_SANDBOX: "maybe" })).toThrow(ConfigError);
    expect(() => loadConfig({ AGENTOS_SANDBOX: "maybe" })).toThrow(/AGENTOS_SANDBOX\b/);
  });

  it("accepts good or blank sandbox values", () => {
    expect(() =>
      loadConfig({ AGENTOS_SANDBOX: "off", AGENTOS_SANDBOX_MEMORY_MB: "4096", AGENTOS_SANDBOX_TMP_MB: " " }),
    ).not.toThrow();
  });
});
