import type { LookupAddress } from "node:dns";
import { describe, expect, it } from "vitest";
import { guardedLookup, type NetworkPolicy } from "../../../src/shared/net/guarded-request.ts";

const answers = [
  { address: "203.0.113.7", family: 4 },
  { address: "2606:4700::1111", family: 6 },
];
const policy = (resolve: NetworkPolicy["resolve"]): NetworkPolicy => ({
  allowPrivateNetwork: false,
  resolve,
});

function run(lookupPolicy: NetworkPolicy, options: { all?: boolean; family?: number }) {
  return new Promise<{ error: Error | null; address: string | LookupAddress[]; family?: number }>(
    (resolve) => {
      guardedLookup(lookupPolicy)("example.test", options, (error, address, family) =>
        resolve({ error, address, family }),
      );
    },
  );
}

describe("guardedLookup (the socket's lookup)", () => {
  it("hands the socket every checked address with all: true, or the first one", async () => {
    const resolve = async () => answers;
    expect(await run(policy(resolve), { all: true })).toMatchObject({ error: null, address: answers });
    expect(await run(policy(resolve), {})).toMatchObject({ error: null, address: "203.0.113.7", family: 4 });
    expect(await run(policy(resolve), { family: 6 })).toMatchObject({
      address: "2606:4700::1111",
      family: 6,
    });
  });

  it("fails the connection when any answer is blocked, whatever family is asked for", async () => {
    const resolve = async () => [...answers, { address: "::ffff:7f00:1", family: 6 }];
    const { error } = await run(policy(resolve), { family: 4 });
    expect(error?.message).toMatch(
      /^SSRF protection: \S*example\.test\S* resolves to blocked IP ::ffff:7f00:1$/,
    );
  });

  it("reports an empty answer as a resolution failure", async () => {
    const { error } = await run(
      policy(async () => []),
      { all: true },
    );
    expect(error?.message).toBe("Could not resolve host example.test: no addresses");
  });
});
