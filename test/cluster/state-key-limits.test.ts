import { describe, expect, it } from "vitest";
import { findTestPostgres } from "../engine/state/contract.ts";
import { CLUSTER_ADMIN_KEY, startCluster } from "../helpers/cluster.ts";

const found = await findTestPostgres();
if (found.url === null) console.warn(`Skipping cluster key-limit tests: ${found.reason}`);

/** Distinct three-byte characters, so PostgreSQL cannot compress an index entry below its limit. */
const cjk = (length: number, from: number) =>
  Array.from({ length }, (_, i) => String.fromCodePoint(0x4e00 + ((from + i * 7919) % 20000))).join("");

describe.skipIf(found.url === null)("cluster mode: keys built from long names", () => {
  it("answers a graph relation between two 500-character names with a 400, not a 500, and keeps nothing", async () => {
    const cluster = await startCluster(found.url ?? "", 1, {});
    const node = cluster.nodes[0];
    const headers = { authorization: `Bearer ${CLUSTER_ADMIN_KEY}` };
    try {
      const agent = await node.http.inject({
        method: "POST",
        url: "/api/agents",
        headers,
        payload: { name: "long-names" },
      });
      const agentId = agent.json().id as string;
      const [entity, target] = [cjk(500, 0), cjk(500, 1)];
      // The entity alone still fits; its relation's key (both names) is what PostgreSQL could not index.
      const add = (relations: unknown[]) =>
        node.http.inject({
          method: "POST",
          url: "/api/kg/add",
          headers,
          payload: { agentId, entity, type: "t", relations },
        });
      const refused = await add([{ target, type: "r" }]);
      expect(refused.statusCode).toBe(400);
      expect(refused.json().error).toMatch(/at most 1536 bytes/);
      const query = await node.http.inject({
        method: "POST",
        url: "/api/kg/query",
        headers,
        payload: { agentId, entity },
      });
      expect(JSON.stringify(query.json())).not.toContain(target);
      expect((await add([])).statusCode).toBe(201);
    } finally {
      await cluster.close();
    }
  }, 60_000);
});
