import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server.ts";

const dirs: string[] = [];
const servers: TestServer[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "agentos-app-"));
  dirs.push(dir);
  return dir;
}

async function start(dataDir: string, overrides: Parameters<typeof startTestServer>[0] = {}) {
  const server = await startTestServer(overrides, { dataDir });
  servers.push(server);
  return server;
}

const isRoot = process.getuid?.() === 0;

describe("start-up: the data directory", () => {
  it("does not follow a symlink planted as admin.key: the file it points to is left alone", async () => {
    const root = scratchDir();
    const victim = join(root, "precious.txt");
    writeFileSync(victim, "not yours to overwrite\n", { mode: 0o644 });
    const dataDir = join(root, "data");
    mkdirSync(dataDir, { mode: 0o700 });
    symlinkSync(victim, join(dataDir, "admin.key"));

    const server = await start(dataDir, { apiKey: undefined });

    expect(readFileSync(victim, "utf8")).toBe("not yours to overwrite\n");
    expect(statSync(victim).mode & 0o777).toBe(0o644);
    const keyFile = join(dataDir, "admin.key");
    expect(lstatSync(keyFile).isSymbolicLink()).toBe(false);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(keyFile, "utf8").trim()).toBe(server.service.generatedAdminKey?.key);
  });

  it("makes an existing data dir that other users could enter owner-only, so workspaces are not readable", async () => {
    const dataDir = join(scratchDir(), "data");
    // What `mkdir data` under the usual umask 022 makes, or a volume mounted for the service.
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o755);

    await start(dataDir);

    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
  });

  it.runIf(isRoot)(
    "refuses a data dir another user owns, naming AGENTOS_DATA_DIR and the owner",
    async () => {
      const dataDir = join(scratchDir(), "data");
      mkdirSync(dataDir, { mode: 0o700 });
      // nobody: whoever owns the directory can swap the database or the keys under the service.
      chownSync(dataDir, 65534, 65534);

      await expect(start(dataDir)).rejects.toThrow(/AGENTOS_DATA_DIR .*data is owned by uid 65534/);
    },
  );

  it("refuses a data dir under /usr, which every sandbox shows, before creating anything there", async () => {
    // A service that is not root runs its sandboxes as its own uid: an agent's program could read the
    // vault key, the database and other agents' workspaces through the read-only /usr.
    const base = `/usr/local/share/agentos-test-${process.pid}-${Date.now()}`;
    dirs.push(base);

    await expect(start(join(base, "data"))).rejects.toThrow(
      /AGENTOS_DATA_DIR \/usr\/local\/share\/agentos-test-.*\/data is inside \/usr, which every sandbox shows/,
    );
    expect(existsSync(base)).toBe(false);
  });
});
