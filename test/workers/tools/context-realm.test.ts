import { expect, it } from "vitest";
import { type ToolsDeps, toolContext } from "../../../src/workers/tools/context.ts";

it("a tool's context carries the calling realm in its network policy", () => {
  const deps = { policy: { allowPrivateNetwork: false, resolve: async () => [] } } as unknown as ToolsDeps;
  const call = (auth: Parameters<typeof toolContext>[1]["auth"]) =>
    toolContext(deps, { functionId: "tool::http_request", auth, signal: new AbortController().signal });
  expect(call({ kind: "realm", realmId: "realm-b", keyId: "k2" }).policy.realm).toBe("realm-b");
  expect(call({ kind: "system" }).policy.realm).toBeUndefined();
});
