import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeTree } from "../../../src/shared/process/remove-tree.ts";

let dir: string;
beforeAll(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "remove-tree-")));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("removing a tree", () => {
  it("removes one nested past PATH_MAX, following none of its links", async () => {
    const tree = join(dir, "tree");
    const outside = join(dir, "outside");
    mkdirSync(tree);
    mkdirSync(outside);
    writeFileSync(join(outside, "kept.txt"), "kept");
    const nest = `
import os, sys
os.symlink(sys.argv[1], "link")
for _ in range(20):
    os.mkdir("d" * 250)
    os.chdir("d" * 250)
os.symlink(sys.argv[1], "deep-link")
open("deepest.txt", "w").write("x")
`;
    expect(spawnSync("python3", ["-c", nest, outside], { cwd: tree }).status).toBe(0);
    await removeTree(tree, "the test tree");
    expect(existsSync(tree)).toBe(false);
    expect(readFileSync(join(outside, "kept.txt"), "utf8")).toBe("kept");
  });

  it("is done when the tree is not there", async () => {
    await removeTree(join(dir, "never"), "nothing");
    symlinkSync(dir, join(dir, "self"));
    await removeTree(join(dir, "self"), "a link");
    expect(existsSync(dir)).toBe(true);
    expect(existsSync(join(dir, "self"))).toBe(false);
  });
});
