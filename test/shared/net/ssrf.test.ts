import { isIP } from "node:net";
import { networkInterfaces } from "node:os";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AppError } from "../../../src/shared/errors.ts";
import {
  blockedCategory,
  checkWebUrl,
  isBlockedAddress,
  isOwnAddress,
  parseWebUrl,
  protocolNotAllowed,
} from "../../../src/shared/net/ssrf.ts";

const strict = { allowPrivateNetwork: false };
/** The specification's message for a blocked literal address (the URL part is whatever was asked for). */
const blockedMessage = (address: string) =>
  new RegExp(
    `^SSRF protection: \\S+ resolves to blocked IP ${address.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`,
  );

describe("address classifier", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["10.0.0.1", "private"],
    ["10.255.255.255", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.0.1", "private"],
    ["192.168.255.255", "private"],
    ["169.254.169.254", "link-local"],
    // Oracle Cloud's metadata service answers here too.
    ["192.0.0.192", "IETF protocol assignments"],
    ["0.0.0.0", "this-network"],
    ["0.1.2.3", "this-network"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["100.127.255.255", "carrier-grade NAT"],
    ["198.18.0.1", "benchmarking"],
    ["198.19.255.255", "benchmarking"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "reserved"],
  ])("blocks IPv4 %s (%s)", (address, category) => {
    expect(blockedCategory(address)).toBe(category);
    expect(isBlockedAddress(address)).toBe(true);
  });

  it.each([
    ["::1", "loopback"],
    ["0:0:0:0:0:0:0:1", "loopback"],
    ["[::1]", "loopback"],
    ["::", "unspecified"],
    ["0:0:0:0:0:0:0:0", "unspecified"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::FFFF:7F00:0001", "loopback"],
    ["::ffff:10.1.2.3", "private"],
    ["::ffff:c0a8:101", "private"],
    ["::ffff:a9fe:a9fe", "link-local"],
    ["::ffff:0.0.0.0", "this-network"],
    ["::127.0.0.1", "loopback"],
    ["64:ff9b::7f00:1", "loopback"],
    ["64:ff9b::10.0.0.1", "private"],
    ["2002:7f00:1::1", "loopback"],
    ["2002:c0a8:101::", "private"],
    ["fc00::1", "unique-local"],
    ["fd12:3456:789a::1", "unique-local"],
    ["fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "unique-local"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["febf:ffff::1", "link-local"],
    ["fec0::1", "site-local"],
    ["ff02::1", "multicast"],
  ])("blocks IPv6 %s (%s)", (address, category) => {
    expect(blockedCategory(address)).toBe(category);
  });

  it.each([
    "8.8.8.8",
    "1.1.1.1",
    "9.255.255.255",
    "11.0.0.0",
    "100.63.255.255",
    "100.128.0.0",
    "126.255.255.255",
    "128.0.0.0",
    "169.253.255.255",
    "169.255.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "192.167.255.255",
    "192.169.0.0",
    "198.17.255.255",
    "198.20.0.0",
    "203.0.113.5",
    "223.255.255.255",
    "2606:4700::1111",
    "2001:4860:4860::8888",
    "::ffff:8.8.8.8",
    "::ffff:808:808",
    "64:ff9b::808:808",
    "2002:808:808::1",
    "fbff::1",
    "fe7f::1",
    "2a00:1450::200e",
  ])("allows public address %s", (address) => {
    expect(blockedCategory(address)).toBeUndefined();
    expect(isBlockedAddress(address)).toBe(false);
  });

  it("fails closed on anything that is not an IP address", () => {
    for (const text of ["", "localhost", "127.0.0.1.", "1.2.3", "::g", "256.1.1.1", "01.2.3.4"]) {
      expect(blockedCategory(text)).toBe("not an IP address");
    }
  });
});

describe("URL checker", () => {
  it.each([
    "ftp://example.com/file",
    "file:///etc/passwd",
    "gopher://example.com/",
    "javascript:alert(1)",
    "data:text/html,<b>x</b>",
    "ws://example.com/",
    "mailto:someone@example.com",
  ])("refuses %s: only http and https", (url) => {
    const protocol = new URL(url).protocol.replace(/:$/, "");
    expect(() => checkWebUrl(url, strict)).toThrow(`Protocol not allowed: ${protocol}`);
    expect(protocolNotAllowed(`${protocol}:`)).toBe(`Protocol not allowed: ${protocol}`);
  });

  it("refuses text that is not a URL", () => {
    expect(() => parseWebUrl("not a url")).toThrow("Invalid URL: not a url");
    expect(() => parseWebUrl("http://")).toThrow("Invalid URL: http://");
  });

  it.each([
    ["http://127.0.0.1/", "127.0.0.1"],
    ["http://2130706433/", "127.0.0.1"],
    ["http://0x7f.1/", "127.0.0.1"],
    ["http://0177.0.0.1/", "127.0.0.1"],
    ["http://127.1/", "127.0.0.1"],
    ["http://0/", "0.0.0.0"],
    ["https://169.254.169.254/latest/meta-data/", "169.254.169.254"],
    ["http://0xa9fea9fe/", "169.254.169.254"],
    ["http://10.1.2.3:8080/", "10.1.2.3"],
    ["http://[::1]/", "::1"],
    ["http://[0:0:0:0:0:0:0:1]:80/", "::1"],
    ["http://[::]/", "::"],
    ["http://[::ffff:127.0.0.1]/", "::ffff:7f00:1"],
    ["http://[::ffff:7f00:1]/", "::ffff:7f00:1"],
    ["http://[fe80::1]/", "fe80::1"],
    ["http://[fd00::2]/", "fd00::2"],
  ])("refuses the numeric host of %s (%s)", (url, address) => {
    let error: unknown;
    try {
      checkWebUrl(url, strict);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ status: 400, message: expect.stringMatching(blockedMessage(address)) });
  });

  it("lets numeric hosts through when the private network is allowed, and exact exemptions", () => {
    expect(checkWebUrl("http://[::1]:8080/x", { allowPrivateNetwork: true }).href).toBe(
      "http://[::1]:8080/x",
    );
    const exempt = { allowPrivateNetwork: false, allowedAddresses: new Set(["127.0.0.1"]) };
    expect(checkWebUrl("http://127.0.0.1/", exempt).hostname).toBe("127.0.0.1");
    expect(() => checkWebUrl("http://127.0.0.2/", exempt)).toThrow(blockedMessage("127.0.0.2"));
    // The scheme rule has no exemption.
    expect(() => checkWebUrl("file:///etc/passwd", { allowPrivateNetwork: true })).toThrow(
      "Protocol not allowed: file",
    );
  });

  it("passes hostnames and public literals (names are checked when the socket resolves them)", () => {
    expect(checkWebUrl("https://example.com/a?b=c", strict).href).toBe("https://example.com/a?b=c");
    expect(checkWebUrl("http://8.8.8.8/", strict).hostname).toBe("8.8.8.8");
    expect(checkWebUrl("http://[2606:4700::1111]/", strict).hostname).toBe("[2606:4700::1111]");
  });

  it("never throws anything but a 400 AppError, and never passes a blocked literal (property)", () => {
    const schemes = fc.constantFrom("http://", "https://", "ftp://", "file://", "HTTP://", "", "//", "http:");
    const hosts = fc.oneof(
      fc.ipV4(),
      fc.ipV4Extended(),
      fc.ipV6().map((address) => `[${address}]`),
      fc.domain(),
      fc.string(),
    );
    const urls = fc.oneof(
      fc.string(),
      fc.string({ unit: "binary" }),
      fc.webUrl({ authoritySettings: { withIPv4: true, withIPv6: true, withIPv4Extended: true } }),
      fc.tuple(schemes, hosts, fc.string()).map(([scheme, host, rest]) => `${scheme}${host}${rest}`),
    );
    fc.assert(
      fc.property(urls, fc.boolean(), (raw, allowPrivateNetwork) => {
        try {
          const url = checkWebUrl(raw, { allowPrivateNetwork });
          expect(["http:", "https:"]).toContain(url.protocol);
          const host = url.hostname.replace(/^\[|\]$/g, "");
          // A literal address that got through must be allowed; names ("." included) are checked at connect time.
          if (!allowPrivateNetwork && isIP(host) !== 0) expect(isBlockedAddress(host)).toBe(false);
        } catch (error) {
          expect(error).toBeInstanceOf(AppError);
          expect((error as AppError).status).toBe(400);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe("this machine's own addresses", () => {
  const own = Object.values(networkInterfaces())
    .flat()
    .map((each) => each?.address as string)
    .filter((address) => isIP(address) === 4);

  it("are refused in every spelling, whatever range they are in", () => {
    for (const address of own) {
      expect(isOwnAddress(address)).toBe(true);
      expect(isOwnAddress(`::ffff:${address}`)).toBe(true);
      expect(isOwnAddress(`[::ffff:${address}]`)).toBe(true);
      expect(() => checkWebUrl(`http://${address}/`, strict)).toThrow(AppError);
    }
  });

  it("leave other public addresses alone", () => {
    const others = ["93.184.215.14", "[2606:4700::1111]"].filter((host) => !isOwnAddress(host));
    for (const host of others) expect(() => checkWebUrl(`http://${host}/`, strict)).not.toThrow();
  });
});
