import { afterEach, expect, it } from "vitest";
import type { DnsCaller } from "../../../src/shared/net/dns-resolver.ts";
import { registerWebTools } from "../../../src/workers/web/index.ts";
import { createTestEngine } from "../../helpers/engine.ts";

let cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

it("tool::web_fetch looks names up as the calling realm, an admin's calls as the service", async () => {
  const callers: Array<DnsCaller | undefined> = [];
  const engine = createTestEngine();
  cleanup.push(() => engine.shutdown());
  registerWebTools(engine.worker("web"), {
    env: {},
    lookup: async (_hostname, caller) => {
      callers.push(caller);
      throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
    },
  });
  const fetch = (auth: Parameters<typeof engine.trigger>[0]["auth"]) =>
    engine.trigger({ function_id: "tool::web_fetch", payload: { url: "http://nowhere.test/" }, auth });
  await expect(
    fetch({ kind: "realm", realmId: "realm-a", keyId: "k1", agentId: "a1" }),
  ).rejects.toMatchObject({
    message: "Could not resolve host nowhere.test: ENOTFOUND",
  });
  await expect(fetch({ kind: "admin", keyId: "k0" })).rejects.toMatchObject({ status: 503 });
  expect(callers).toEqual([{ realm: "realm-a" }, { realm: undefined }]);
});
