import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { clientOf } from "../../src/http/client-address.ts";

const group = fc.integer({ min: 0, max: 0xffff });
const groups = fc.array(group, { minLength: 8, maxLength: 8 });
const written = (parts: number[]) => parts.map((part) => part.toString(16)).join(":");

describe("the client an address stands for", () => {
  it("is an IPv4 address itself", () => {
    expect(clientOf("203.0.113.7")).toBe("203.0.113.7");
  });

  it("is an IPv6 address's /64, however the address is written", () => {
    expect(clientOf("2001:db8:1:2::1")).toBe("2001:db8:1:2::/64");
    expect(clientOf("2001:0DB8:0001:0002:ffff:0:0:9")).toBe("2001:db8:1:2::/64");
    expect(clientOf("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(clientOf("::1")).toBe("0:0:0:0::/64");
  });

  it("is the IPv4 address of an IPv4-mapped IPv6 address", () => {
    expect(clientOf("::ffff:192.0.2.1")).toBe("192.0.2.1");
    expect(clientOf("::ffff:c000:201")).toBe("192.0.2.1");
  });

  it("puts every address of one /64 together and addresses of different /64s apart", () => {
    fc.assert(
      fc.property(groups, groups, (a, b) => {
        const sameNetwork = [...a.slice(0, 4), ...b.slice(4)];
        expect(clientOf(written(sameNetwork))).toBe(clientOf(written(a)));
        const apart = a.slice(0, 4).join() !== b.slice(0, 4).join();
        const mapped = (parts: number[]) => parts.slice(0, 5).every((p) => p === 0) && parts[5] === 0xffff;
        if (apart && !mapped(a) && !mapped(b)) expect(clientOf(written(a))).not.toBe(clientOf(written(b)));
      }),
    );
  });

  it("leaves anything that is not an address as it came", () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        expect(typeof clientOf(text)).toBe("string");
      }),
    );
    expect(clientOf("1:2:3")).toBe("1:2:3");
  });
});
