import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { prepareDataDir } from "../../src/config/data-dir.ts";
import { ConfigError } from "../../src/config/env.ts";
import { systemLayout } from "../../src/shared/process/sandbox/layout.ts";
import { makeDataDir, removeDir } from "../helpers/process.ts";

const made: string[] = [];
afterEach(() => {
  // The old code made some of these (as root, /dev/… is writable): none may outlive the test.
  for (const dir of made.splice(0)) if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
});

describe("a data dir on a filesystem of the kernel's", () => {
  it("refuses one under /proc at once, where making it never returned", () => {
    // In a child: the old mkdir spun forever, which no test timeout can interrupt in this process.
    const script = `import("./src/config/data-dir.ts").then(({ prepareDataDir }) => {
      try { prepareDataDir("/proc/agentos-data-test", () => undefined); } catch (error) { console.log(error.message); }
    })`;
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(child.signal).toBeNull();
    expect(child.stdout).toContain("AGENTOS_DATA_DIR /proc/agentos-data-test is inside /proc");
  });

  it.each(["/sys/agentos-data-test", "/dev/agentos-data-test", "/dev"])(
    "refuses %s, naming AGENTOS_DATA_DIR, and makes nothing there",
    (dataDir) => {
      made.push(dataDir === "/dev" ? "/dev/agentos-never" : dataDir);
      expect(() => prepareDataDir(dataDir, () => undefined)).toThrow(ConfigError);
      expect(() => prepareDataDir(dataDir, () => undefined)).toThrow(
        new RegExp(`^AGENTOS_DATA_DIR ${dataDir} is inside /(sys|dev), a filesystem of the kernel's`),
      );
      if (dataDir !== "/dev") expect(existsSync(dataDir)).toBe(false);
    },
  );

  it("refuses one under an /etc entry every sandbox shows (/etc/ssl…), and makes nothing there", (context) => {
    // A service that is not root runs its sandboxes as its own uid: its programs read the vault key and
    // the database in the sandbox's copy of /etc/ssl as well as they would under /usr.
    const entry = systemLayout().etc.find(
      (path) => statSync(path).isDirectory() && path !== "/etc/ssl/private",
    );
    if (!entry) return context.skip("no /etc directory the sandbox shows here");
    const base = `${entry}/agentos-data-test-${process.pid}`;
    made.push(base);
    expect(() => prepareDataDir(`${base}/data`, () => undefined)).toThrow(
      new RegExp(`^AGENTOS_DATA_DIR ${base}/data is inside ${entry}, which every sandbox shows`),
    );
    expect(existsSync(base)).toBe(false);
  });

  it("still makes a missing data dir and its parents, owner-only", () => {
    const base = makeDataDir();
    try {
      const dataDir = `${base}/a/b`;
      prepareDataDir(dataDir, () => undefined);
      expect(statSync(`${base}/a`).mode & 0o777).toBe(0o700);
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    } finally {
      removeDir(base);
    }
  });
});

describe("a data dir open to others", () => {
  it("is tightened to 0700 when it holds only the service's own files", () => {
    const base = makeDataDir();
    try {
      chmodSync(base, 0o755);
      writeFileSync(join(base, "admin.key"), "x");
      mkdirSync(join(base, "workspaces"));
      const warnings: string[] = [];
      prepareDataDir(base, (message) => warnings.push(message));
      expect(statSync(base).mode & 0o777).toBe(0o700);
      expect(warnings.join()).toContain("permissions tightened to 0700");
    } finally {
      removeDir(base);
    }
  });

  it("is refused, and left as it is, when it holds files that are not the service's (a shared directory like /tmp)", () => {
    const base = makeDataDir();
    try {
      chmodSync(base, 0o1777);
      writeFileSync(join(base, "someone-elses.txt"), "x");
      expect(() => prepareDataDir(base, () => undefined)).toThrow(ConfigError);
      expect(() => prepareDataDir(base, () => undefined)).toThrow(
        /is open to other users \(mode 1777\) and holds files that are not the service's \(someone-elses\.txt\)/,
      );
      expect(statSync(base).mode & 0o7777).toBe(0o1777);
    } finally {
      removeDir(base);
    }
  });
});
