import { afterEach, expect, it } from "vitest";
import type { DnsCaller } from "../../../src/shared/net/dns-resolver.ts";
import { IntegrationRegistry } from "../../../src/workers/integrations/registry.ts";
import { integrationFile } from "../../../src/workers/integrations/schema.ts";
import { createTestEngine } from "../../helpers/engine.ts";

let cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

it("an HTTP tool whose host is an argument looks it up as the calling realm", async () => {
  const callers: Array<DnsCaller | undefined> = [];
  const engine = createTestEngine();
  cleanup.push(() => engine.shutdown());
  const registry = new IntegrationRegistry(engine.worker("integrations"), () => {}, {
    policy: {
      allowPrivateNetwork: false,
      resolve: async (_hostname, caller) => {
        callers.push(caller);
        throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
      },
    },
    readSecret: async () => "",
  });
  cleanup.push(() => registry.closeAll());
  const config = integrationFile.parse({ http: [{ name: "get", url: "https://{{sub}}.example.test/" }] });
  expect((await registry.apply([{ name: "api", file: "api.toml", config }])).connected).toEqual(["api"]);
  await expect(
    engine.trigger({
      function_id: "http::api::get",
      payload: { sub: "x1" },
      auth: { kind: "realm", realmId: "realm-a", keyId: "k1" },
    }),
  ).rejects.toMatchObject({ message: "Could not resolve host x1.example.test: ENOTFOUND" });
  expect(callers).toEqual([{ realm: "realm-a" }]);
});
