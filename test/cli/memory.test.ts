import { describe, expect, it } from "vitest";
import { progressLine } from "../../src/cli/memory.ts";
import { runCli } from "../helpers/process.ts";
import { TEST_ADMIN_KEY } from "../helpers/server.ts";
import { backends, newAgent, remember, send, serviceOn } from "../workers/memory/embedding-env.ts";

/** `agentos memory backfill` against a service on SQLite and on PostgreSQL. */
describe.each(backends)("agentos memory backfill ($name)", (backend) => {
  const { server } = serviceOn(backend);

  const agentos = (...args: string[]) =>
    runCli(["memory", ...args], { AGENTOS_URL: server().url, AGENTOS_API_KEY: TEST_ADMIN_KEY });

  it("embeds an agent's memories (by name) and ends when none is pending", async () => {
    const agentId = await newAgent(server());
    const { name } = (await send(server(), "GET", `/api/agents/${agentId}`)).body;
    await remember(server(), agentId, ["first old memory", "second old memory", "third old memory"]);
    const patched = await send(server(), "PATCH", `/api/agents/${agentId}`, {
      embeddingModel: "text-embedding-3-small",
    });
    expect(patched.status).toBe(200);
    const result = await agentos("backfill", name);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`${agentId}: 3/3 embedded with openai/text-embedding-3-small`);
    const all = await agentos("backfill", "--json");
    expect(all.code, all.stderr).toBe(0);
    const statuses = JSON.parse(all.stdout) as Array<{ agentId: string; pending: number; model: string }>;
    expect(statuses.find((status) => status.agentId === agentId)).toMatchObject({ pending: 0 });
    expect(statuses.every((status) => status.model !== null && status.pending === 0)).toBe(true);
  });

  it("says an agent without an embedding model has nothing to embed", async () => {
    const agentId = await newAgent(server());
    const result = await agentos("backfill", agentId);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`agent ${agentId} has no embedding model`);
  });
});

describe("agentos memory backfill's progress", () => {
  it("draws a progress bar", () => {
    expect(progressLine("a", 0, 4, null)).toBe(`a [${"·".repeat(30)}] 0/4 embedded (0 %)`);
    expect(progressLine("a", 2, 4, "fake outage")).toBe(
      `a [${"#".repeat(15)}${"·".repeat(15)}] 2/4 embedded (50 %)  (retrying: fake outage)`,
    );
    expect(progressLine("a", 0, 0, null)).toContain("(100 %)");
  });
});
