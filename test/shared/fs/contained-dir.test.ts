import {
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listContained } from "../../../src/shared/fs/contained-dir.ts";
import { diskUsage } from "../../../src/shared/process/sandbox/quota.ts";
import { sourceFiles } from "../../../src/workers/tools/code/sources.ts";
import { directorySize } from "../../../src/workers/tools/system/inspect.ts";

let base: string;
let root: string;
let outside: string;

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "contained-")));
  root = join(base, "workspace");
  outside = join(base, "host");
  mkdirSync(join(root, "src", "deep"), { recursive: true });
  writeFileSync(join(root, "src", "a.ts"), "export const a = 1;\n");
  writeFileSync(join(root, "src", "deep", "b.ts"), "export const b = 2;\n");
  mkdirSync(join(outside, "secrets"), { recursive: true });
  writeFileSync(join(outside, "secrets", "vault.ts"), "x".repeat(100_000));
});
afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

/** What a program does between a walk's listing and its descent: the directory becomes a link out. */
function swapForLink(dir: string, target: string): void {
  renameSync(dir, `${dir}.moved`);
  symlinkSync(target, dir);
}

describe("listContained", () => {
  it("lists a directory inside the root with each entry's kind and size, links not followed", async () => {
    symlinkSync(outside, join(root, "src", "link"));
    const entries = await listContained(root, join(root, "src"));
    expect(entries?.map((entry) => [entry.name, entry.isDirectory, entry.isFile]).sort()).toEqual([
      ["a.ts", false, true],
      ["deep", true, false],
      ["link", false, false],
    ]);
    expect(entries?.find((entry) => entry.name === "a.ts")).toMatchObject({
      path: join(root, "src", "a.ts"),
      size: 20,
    });
  });

  it("refuses a directory that is, once opened, outside the root: a queued directory swapped for a link", async () => {
    swapForLink(join(root, "src"), outside);
    expect(await listContained(root, join(root, "src"))).toBeNull();
    // A link above the directory asked for is caught the same way.
    expect(await listContained(root, join(root, "src", "secrets"))).toBeNull();
    expect(await listContained(root, join(root, "nothing-here"))).toBeNull();
  });
});

describe("workspace walks", () => {
  it("neither count, list nor measure what a swapped directory points to", async () => {
    const before = await directorySize(root);
    expect(before).toMatchObject({ files: 2, complete: true });
    swapForLink(join(root, "src", "deep"), join(outside, "secrets"));
    // The walks start below the swap: as if the link had been made after the listing of src.
    expect(await listContained(root, join(root, "src", "deep"))).toBeNull();
    const after = await directorySize(root);
    expect(after.bytes).toBeLessThan(1000);
    expect((await sourceFiles(root)).some((file) => file.includes("vault"))).toBe(false);
    expect(await diskUsage(root)).toBeLessThan(100_000);
  });
});
