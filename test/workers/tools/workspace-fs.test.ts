import { execFileSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runsAsRoot, workspaceOwner } from "../../../src/shared/process/sandbox/owner.ts";
import {
  chownTree,
  makeDirectoryInside,
  readInside,
  readRangeInside,
  removeInside,
  statInside,
  writeInside,
} from "../../../src/workers/tools/workspace-fs.ts";

let base: string;
let root: string;
let outside: string;

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "agentos-wsfs-")));
  root = join(base, "workspace");
  outside = join(base, "outside");
  mkdirSync(root);
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.db"), "secret");
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

/** The error a call fails with, as the tool would report it. */
async function failure(work: Promise<unknown>): Promise<{ status?: number; message: string }> {
  try {
    await work;
  } catch (error) {
    return { status: (error as { status?: number }).status, message: (error as Error).message };
  }
  throw new Error("succeeded where it should have failed");
}

describe("workspace file I/O", () => {
  it("reads, writes, appends and makes directories inside the workspace", async () => {
    await writeInside(root, join(root, "a/b/c.txt"), "hello");
    await writeInside(root, join(root, "a/b/c.txt"), " world", { append: true });
    expect(readFileSync(join(root, "a/b/c.txt"), "utf8")).toBe("hello world");
    expect((await readInside(root, join(root, "a/b/c.txt"))).toString()).toBe("hello world");
    expect(await readRangeInside(root, join(root, "a/b/c.txt"), 6, 3)).toMatchObject({ size: 11 });
    expect((await readRangeInside(root, join(root, "a/b/c.txt"), 6, 3)).bytes.toString()).toBe("wor");
    await writeInside(root, join(root, "a/b/c.txt"), "short");
    expect(readFileSync(join(root, "a/b/c.txt"), "utf8")).toBe("short");
    await makeDirectoryInside(root, join(root, "x/y/z"));
    expect(statSync(join(root, "x/y/z")).isDirectory()).toBe(true);
    expect((await statInside(root, join(root, "x/y"))).isDirectory()).toBe(true);
    expect((await statInside(root, root)).isDirectory()).toBe(true);
    await removeInside(root, join(root, "a/b/c.txt"));
    expect(existsSync(join(root, "a/b/c.txt"))).toBe(false);
  });

  it("refuses a file larger than the cap, a directory as a file, and a missing file with a 4xx", async () => {
    writeFileSync(join(root, "big"), "x".repeat(100));
    expect(await failure(readInside(root, join(root, "big"), 10))).toMatchObject({ status: 400 });
    mkdirSync(join(root, "dir"));
    expect(await failure(readInside(root, join(root, "dir")))).toMatchObject({ status: 400 });
    expect(await failure(writeInside(root, join(root, "dir"), "x"))).toMatchObject({ status: 400 });
    expect(await failure(readInside(root, join(root, "missing")))).toMatchObject({ status: 404 });
    expect(await failure(writeInside(root, root, "x"))).toMatchObject({ status: 400 });
  });

  it("refuses to read or stat through a link planted in the workspace that points outside", async () => {
    symlinkSync(join(outside, "secret.db"), join(root, "link"));
    symlinkSync(outside, join(root, "dirlink"));
    for (const path of ["link", "dirlink/secret.db"]) {
      const refused = await failure(readInside(root, join(root, path)));
      expect(refused.status).toBe(400);
      expect(refused.message).toContain("link");
      expect((await failure(statInside(root, join(root, path)))).status).toBe(400);
      expect((await failure(readRangeInside(root, join(root, path), 0, 10))).status).toBe(400);
    }
  });

  it("refuses to write, append or delete through a link to a file outside, which stays unchanged", async () => {
    symlinkSync(join(outside, "secret.db"), join(root, "link"));
    expect((await failure(writeInside(root, join(root, "link"), "pwned"))).status).toBe(400);
    expect((await failure(writeInside(root, join(root, "link"), "pwned", { append: true }))).status).toBe(
      400,
    );
    expect(readFileSync(join(outside, "secret.db"), "utf8")).toBe("secret");
    // Removing the link itself is harmless: the target stays.
    await removeInside(root, join(root, "link"));
    expect(readFileSync(join(outside, "secret.db"), "utf8")).toBe("secret");
  });

  it("refuses writes through a linked parent directory pointing outside, creating nothing there", async () => {
    symlinkSync(outside, join(root, "dirlink"));
    for (const path of ["dirlink/new.txt", "dirlink/sub/new.txt", "dirlink/secret.db"]) {
      const refused = await failure(writeInside(root, join(root, path), "pwned"));
      expect(refused.status).toBe(400);
      expect(refused.message).toContain("link");
    }
    expect((await failure(makeDirectoryInside(root, join(root, "dirlink/sub")))).status).toBe(400);
    expect((await failure(removeInside(root, join(root, "dirlink/secret.db")))).status).toBe(400);
    expect(readFileSync(join(outside, "secret.db"), "utf8")).toBe("secret");
    expect(existsSync(join(outside, "new.txt"))).toBe(false);
    expect(existsSync(join(outside, "sub"))).toBe(false);
  });

  it("refuses a FIFO planted in the workspace instead of hanging on it", async () => {
    execFileSync("mkfifo", [join(root, "fifo")]);
    expect((await failure(readInside(root, join(root, "fifo")))).status).toBe(400);
    expect((await failure(writeInside(root, join(root, "fifo"), "x"))).status).toBe(400);
  });
});

if (!runsAsRoot()) console.warn("Skipping workspace ownership tests: the test does not run as root");

describe.skipIf(!runsAsRoot())("workspace ownership (service running as root)", () => {
  it("hands files and each directory it creates to the workspace's owner", async () => {
    const owner = workspaceOwner(root);
    await writeInside(root, join(root, "a/b/file.txt"), "x");
    await makeDirectoryInside(root, join(root, "c/d"));
    for (const path of ["a", "a/b", "a/b/file.txt", "c", "c/d"]) {
      expect(statSync(join(root, path))).toMatchObject({ uid: owner?.uid, gid: owner?.gid });
    }
  });

  it("leaves the owner of a file it did not create", async () => {
    writeFileSync(join(root, "existing"), "x");
    await writeInside(root, join(root, "existing"), "y");
    expect(statSync(join(root, "existing")).uid).toBe(0);
  });

  it("hands a copied tree to the owner, links themselves and never their targets", async () => {
    const owner = workspaceOwner(root);
    mkdirSync(join(root, "copy/sub"), { recursive: true });
    writeFileSync(join(root, "copy/sub/f"), "x");
    symlinkSync(join(outside, "secret.db"), join(root, "copy/link"));
    await chownTree(root, join(root, "copy"));
    for (const path of ["copy", "copy/sub", "copy/sub/f", "copy/link"]) {
      expect(lstatSync(join(root, path))).toMatchObject({ uid: owner?.uid, gid: owner?.gid });
    }
    expect(statSync(join(outside, "secret.db")).uid).toBe(0);
  });
});
