import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { languageServerFor } from "../../../../src/workers/tools/code/lsp-servers.ts";
import { isExecutableWithin, isFileWithin } from "../../../../src/workers/tools/code/probe.ts";

/*
 * A program plants links in its workspace pointing at host paths; what the service answers must not
 * depend on whether those host paths exist (access()/stat through the link made it an existence oracle).
 */
let dir: string;
let host: string;
let root: string;
beforeAll(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "probe-")));
  host = join(dir, "host");
  root = join(dir, "workspace");
  mkdirSync(join(host, ".bin"), { recursive: true });
  writeFileSync(join(host, ".bin", "biome"), "#!/bin/sh\n");
  chmodSync(join(host, ".bin", "biome"), 0o755);
  writeFileSync(join(host, "tsconfig.json"), "{}");
  mkdirSync(join(root, "real", ".bin"), { recursive: true });
  writeFileSync(join(root, "real", ".bin", "biome"), "#!/bin/sh\n");
  chmodSync(join(root, "real", ".bin", "biome"), 0o755);
  writeFileSync(join(root, "real", "plain"), "x");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("looking up a file inside a workspace", () => {
  it("finds nothing through a link that leads out, whether or not its target exists", async () => {
    symlinkSync(host, join(root, "out"));
    symlinkSync(join(dir, "missing"), join(root, "gone"));
    symlinkSync(join(host, "tsconfig.json"), join(root, "tsconfig.json"));
    symlinkSync("../host", join(root, "up"));
    for (const link of ["out", "gone", "up"]) {
      expect(await isExecutableWithin(root, `${link}/.bin/biome`)).toBe(false);
      expect(await isFileWithin(root, `${link}/tsconfig.json`)).toBe(false);
    }
    expect(await isFileWithin(root, "tsconfig.json")).toBe(false);
    expect(await isFileWithin(root, "real/../../host/tsconfig.json")).toBe(false);
  });

  it("follows links that stay inside, by the workspace's host path or as programs see it", async () => {
    symlinkSync("real", join(root, "rel"));
    symlinkSync(join(root, "real"), join(root, "abs"));
    symlinkSync("/workspace/real", join(root, "sandboxed"));
    symlinkSync("../plain", join(root, "real", ".bin", "sibling"));
    for (const link of ["real", "rel", "abs", "sandboxed"]) {
      expect(await isExecutableWithin(root, `${link}/.bin/biome`)).toBe(true);
    }
    expect(await isExecutableWithin(root, "real/plain")).toBe(false);
    expect(await isFileWithin(root, "real/.bin/sibling")).toBe(true);
    expect(await isFileWithin(root, "real")).toBe(false);
  });

  it("does not take a workspace's TypeScript whose tsc is a link out of it", async () => {
    const ts = join(root, "node_modules", "typescript");
    mkdirSync(ts, { recursive: true });
    writeFileSync(join(ts, "package.json"), JSON.stringify({ version: "7.0.0" }));
    symlinkSync(join(host, ".bin"), join(ts, "bin"));
    writeFileSync(join(host, ".bin", "tsc"), "#!/bin/sh\n");
    chmodSync(join(host, ".bin", "tsc"), 0o755);
    const found = await languageServerFor(root, join(root, "a.ts")).catch(() => null);
    expect(found?.executable ?? "").not.toContain(root);
  });
});
