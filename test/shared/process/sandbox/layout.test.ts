import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { etcCopy } from "../../../../src/shared/process/sandbox/layout.ts";

const dir = mkdtempSync(join(tmpdir(), "etc-copy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/*
 * The sandbox's /etc is a copy of a few entries of the host's (/etc/ssl, /etc/python3…). An operator may
 * keep a secret in one of them (a TLS key beside the certificates, a data dir under /etc/ssl); a service
 * that is not root runs its sandboxes as its own uid, which could read its own 0600 files in the copy.
 */
describe("the sandbox's copy of /etc", () => {
  it("leaves out what not everyone may read, and keeps what everyone may", () => {
    const entry = join(dir, "ssl");
    mkdirSync(join(entry, "certs"), { recursive: true, mode: 0o755 });
    writeFileSync(join(entry, "certs", "ca.pem"), "public", { mode: 0o644 });
    symlinkSync("/usr/share/ca-certificates/ca.crt", join(entry, "certs", "link.pem"));
    writeFileSync(join(entry, "service.key"), "secret", { mode: 0o600 });
    mkdirSync(join(entry, "agentos", "data"), { recursive: true, mode: 0o700 });
    writeFileSync(join(entry, "agentos", "data", "vault.key"), "secret", { mode: 0o644 });

    const copy = join(etcCopy([entry]), "ssl");

    expect(readdirSync(join(copy, "certs")).sort()).toEqual(["ca.pem", "link.pem"]);
    expect(existsSync(join(copy, "service.key"))).toBe(false);
    expect(existsSync(join(copy, "agentos"))).toBe(false);
  });
});
