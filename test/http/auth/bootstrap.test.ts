import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bootstrapAdminKey } from "../../../src/http/auth/bootstrap.ts";
import { listKeys, verifyKey } from "../../../src/http/auth/keys.ts";
import { createStateEngine } from "../../helpers/engine.ts";

let dir: string;
let harness: ReturnType<typeof createStateEngine>;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "agentos-bootstrap-"));
  harness = createStateEngine();
});

afterEach(async () => {
  await harness.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("bootstrap admin key", () => {
  it("generates a key once, writes it owner-only, and keeps it on later starts", async () => {
    const first = await bootstrapAdminKey(harness.state, { dataDir: dir });
    expect(first.generatedKey).toMatch(/^aos_/);
    const file = join(dir, "admin.key");
    expect(readFileSync(file, "utf8").trim()).toBe(first.generatedKey);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(await verifyKey(harness.state, first.generatedKey as string)).toMatchObject({ kind: "admin" });
    expect(await bootstrapAdminKey(harness.state, { dataDir: dir })).toEqual({});
  });

  it("tightens an admin.key left readable by others", async () => {
    const file = join(dir, "admin.key");
    writeFileSync(file, "old\n");
    chmodSync(file, 0o644);
    await bootstrapAdminKey(harness.state, { dataDir: dir });
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("registers AGENTOS_API_KEY without writing a file or showing any of it", async () => {
    const apiKey = "zq-chosen-key-0123456789";
    expect(await bootstrapAdminKey(harness.state, { apiKey, dataDir: dir })).toEqual({});
    expect(await verifyKey(harness.state, apiKey)).toMatchObject({ kind: "admin" });
    const [listed] = await listKeys(harness.state);
    expect(JSON.stringify(listed)).not.toContain("zq-c");
    expect(() => statSync(join(dir, "admin.key"))).toThrow();
  });
});
