import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { createAgentOS } from "../../../src/app.ts";
import { loadConfig } from "../../../src/config/env.ts";
import { call, createAgent, newRealm, realmKey } from "../../helpers/control-plane.ts";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";
import { eventually, sleep } from "../../helpers/iii.ts";
import { startTestServer } from "../../helpers/server.ts";

const env = serverWithFakeModel();

async function swarmOf(agentIds: string[], fields: Record<string, unknown> = {}) {
  const created = await call(env.server, "POST", "/api/swarm/create", {
    goal: "Ship v2 on Friday",
    agentIds,
    ...fields,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body as { swarmId: string; realmId: string };
}

const say = (swarmId: string, body: Record<string, unknown>, key?: string) =>
  call(env.server, "POST", `/api/swarm/${swarmId}/broadcast`, body, key);

describe("swarms", () => {
  it("takes members' messages, reports consensus by latest vote, and collects them", async () => {
    const swarm = await swarmOf(["ana", "ben", "cy"]);
    expect(swarm).toMatchObject({
      status: "active",
      maxDurationMs: 600_000,
      consensusThreshold: 0.66,
      messageCount: 0,
    });
    expect(swarm.swarmId).toMatch(/^swm-/);
    expect(
      (await say(swarm.swarmId, { agentId: "ana", type: "observation", message: "tests are green" })).status,
    ).toBe(200);
    const outsider = await say(swarm.swarmId, { agentId: "zed", type: "observation", message: "hi" });
    expect(outsider.status).toBe(403);
    expect((await say(swarm.swarmId, { agentId: "ana", type: "vote", message: "ship" })).status).toBe(400);
    await say(swarm.swarmId, { agentId: "ana", type: "vote", message: "Ship it", vote: "against" });
    await say(swarm.swarmId, { agentId: "ana", type: "vote", message: " ship IT ", vote: "for" });
    await say(swarm.swarmId, { agentId: "ben", type: "vote", message: "ship it", vote: "for" });
    await say(swarm.swarmId, { agentId: "cy", type: "vote", message: "ship it", vote: "against" });
    await say(swarm.swarmId, { agentId: "cy", type: "vote", message: "other idea", vote: "for" });
    const consensus = await call(env.server, "POST", `/api/swarm/${swarm.swarmId}/consensus`, {
      proposal: "ship it",
    });
    expect(consensus.body).toMatchObject({
      hasConsensus: true,
      votesFor: 2,
      votesAgainst: 1,
      threshold: 0.66,
      totalVoters: 3,
    });
    const collect = await call(env.server, "GET", `/api/swarm/${swarm.swarmId}/collect`);
    expect(collect.body.totalMessages).toBe(6);
    expect(collect.body.observations).toHaveLength(1);
    expect(collect.body.votes).toHaveLength(5);
    expect(Object.keys(collect.body.agents).sort()).toEqual(["ana", "ben", "cy"]);
  });

  it("archives each member's findings to its memory when dissolved, then takes no more messages", async () => {
    const realmId = await newRealm(env.server, "swarming");
    const key = await realmKey(env.server, realmId);
    const ana = await createAgent(env.server, realmId, { name: "ana" });
    const ben = await createAgent(env.server, realmId, { name: "ben" });
    const created = await call(
      env.server,
      "POST",
      "/api/swarm/create",
      { goal: "g", agentIds: [ana, ben] },
      key,
    );
    const { swarmId } = created.body;
    expect(created.body.realmId).toBe(realmId);
    await say(swarmId, { agentId: ana, type: "observation", message: "the cache is cold" }, key);
    const dissolved = await call(env.server, "POST", `/api/swarm/${swarmId}/dissolve`, undefined, key);
    expect(dissolved.body).toMatchObject({ status: "dissolved", messageCount: 1, archived: 1 });
    const recalled = await call(env.server, "POST", `/api/agents/${ana}/memory`, { query: "cache" }, key);
    expect(JSON.stringify(recalled.body)).toContain(swarmId);
    const late = await say(swarmId, { agentId: ben, type: "observation", message: "too late" }, key);
    expect(late.status).toBe(409);
    const stranger = await realmKey(env.server, await newRealm(env.server, "other"));
    expect((await call(env.server, "GET", `/api/swarm/${swarmId}/status`, undefined, stranger)).status).toBe(
      404,
    );
  });

  it("lists a realm's swarms newest first, by status, page by page, and only to that realm", async () => {
    const realmId = await newRealm(env.server, "listing");
    const key = await realmKey(env.server, realmId);
    const ana = await createAgent(env.server, realmId, { name: "ana" });
    const ids: string[] = [];
    for (const goal of ["first", "second", "third"]) {
      const created = await call(env.server, "POST", "/api/swarm/create", { goal, agentIds: [ana] }, key);
      ids.push(created.body.swarmId);
    }
    await call(env.server, "POST", `/api/swarm/${ids[0]}/dissolve`, undefined, key);
    const all = await call(env.server, "GET", "/api/swarm", undefined, key);
    expect(all.body.count).toBe(3);
    expect(all.body.swarms.map((swarm: { goal: string }) => swarm.goal)).toEqual([
      "third",
      "second",
      "first",
    ]);
    const active = await call(env.server, "GET", "/api/swarm?status=active", undefined, key);
    expect(active.body.swarms.map((swarm: { swarmId: string }) => swarm.swarmId).sort()).toEqual(
      [ids[1], ids[2]].sort(),
    );
    const first = await call(env.server, "GET", "/api/swarm?limit=2", undefined, key);
    const second = await call(
      env.server,
      "GET",
      `/api/swarm?limit=2&cursor=${first.body.nextCursor}`,
      undefined,
      key,
    );
    expect(
      [...first.body.swarms, ...second.body.swarms].map((swarm: { goal: string }) => swarm.goal),
    ).toEqual(["third", "second", "first"]);
    expect(second.body.nextCursor).toBeNull();
    const stranger = await realmKey(env.server, await newRealm(env.server, "elsewhere"));
    expect((await call(env.server, "GET", "/api/swarm", undefined, stranger)).body.count).toBe(0);
    expect((await call(env.server, "GET", `/api/swarm?realmId=${realmId}`, undefined, stranger)).status).toBe(
      404,
    );
    expect((await call(env.server, "GET", "/api/swarm?status=asleep", undefined, key)).status).toBe(400);
  });

  it("lists a realm's swarms and sweeps expiries without reading every realm's swarms", async () => {
    const engine = env.server.service.engine;
    const busy = await newRealm(env.server, "busy");
    for (let i = 0; i < 150; i++) {
      await engine.trigger({
        function_id: "swarm::create",
        payload: { goal: `g${i}`, agentIds: ["a"], realmId: busy, maxDurationMs: 3_600_000 },
      });
    }
    const quiet = await newRealm(env.server, "quiet");
    const key = await realmKey(env.server, quiet);
    await call(env.server, "POST", "/api/swarm/create", { goal: "mine", agentIds: ["b"] }, key);
    // Every record the state store hands out while the quiet realm lists, then while the sweep runs.
    const listed: Array<{ scope: string; items: number }> = [];
    const trigger = engine.trigger.bind(engine);
    const spy = vi.spyOn(engine, "trigger").mockImplementation(async (request) => {
      const answer = await trigger(request);
      if (request.function_id === "state::list") {
        const { scope } = request.payload as { scope: string };
        listed.push({ scope, items: (answer as { items: unknown[] }).items.length });
      }
      return answer;
    });
    try {
      const list = await call(env.server, "GET", "/api/swarm", undefined, key);
      expect(list.body.count).toBe(1);
      const read = listed.reduce((sum, page) => sum + page.items, 0);
      expect(read, JSON.stringify(listed)).toBeLessThanOrEqual(1);
      listed.length = 0;
      await engine.trigger({ function_id: "swarm::sweep", payload: {} });
      const swept = listed.reduce((sum, page) => sum + page.items, 0);
      expect(swept, JSON.stringify(listed)).toBeLessThanOrEqual(100);
    } finally {
      spy.mockRestore();
    }
  });

  it("refuses bad input with a 4xx naming it", async () => {
    const many = Array.from({ length: 21 }, (_, i) => `a${i}`);
    expect(
      (await call(env.server, "POST", "/api/swarm/create", { goal: "g", agentIds: many })).body.error,
    ).toContain("at most 20");
    expect((await call(env.server, "GET", "/api/swarm/swm-nope/status")).status).toBe(404);
    const swarm = await swarmOf(["a"]);
    expect((await say(swarm.swarmId, { agentId: "a", type: "shout", message: "x" })).status).toBe(400);
  });

  it("expires on time without a request", async () => {
    const swarm = await swarmOf(["a"], { maxDurationMs: 1000 });
    const stored = () =>
      env.server.service.engine.trigger({
        function_id: "state::get",
        payload: { scope: "swarms", key: swarm.swarmId },
      });
    await eventually(async () => ((await stored()) as { status: string }).status === "expired", 5000);
  });

  it("runs itself: three member agents vote on the goal until they agree", async () => {
    const realmId = await newRealm(env.server, "self-running");
    const members = [];
    for (const name of ["ana", "ben", "cy"]) members.push(await createAgent(env.server, realmId, { name }));
    const created = await call(env.server, "POST", "/api/swarm/create", {
      goal: "Adopt TypeScript 7",
      agentIds: members,
      realmId,
    });
    env.fake.reply(
      { content: "For. It is faster." },
      { content: "for: the types are stricter" },
      { content: "Against, too early." },
    );
    const run = await call(env.server, "POST", `/api/swarm/${created.body.swarmId}/run`, { rounds: 3 });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(run.body).toMatchObject({
      rounds: 1,
      consensus: { hasConsensus: true, votesFor: 2, votesAgainst: 1 },
      failures: [],
    });
    const prompt = JSON.stringify(env.fake.requests.at(-1));
    expect(prompt).toContain("Adopt TypeScript 7");
    const collect = await call(env.server, "GET", `/api/swarm/${created.body.swarmId}/collect`);
    expect(collect.body.observations).toHaveLength(3);
  });

  it("refuses swarm::run from a member's own tool call, so one run cannot start runs without end", async () => {
    const realmId = await newRealm(env.server, "recursive-run");
    const key = await realmKey(env.server, realmId);
    const members = [
      await createAgent(env.server, realmId, { tools: ["swarm::*"] }),
      await createAgent(env.server, realmId, { tools: ["swarm::*"] }),
    ];
    const created = await call(
      env.server,
      "POST",
      "/api/swarm/create",
      { goal: "g", agentIds: members },
      key,
    );
    const { swarmId } = created.body;
    // A hostile model: each member's turn starts another run of 10 rounds of the whole swarm.
    const again = { toolCalls: [{ name: "swarm__run", arguments: { swarmId, rounds: 10 } }] };
    env.fake.reply(again, again, again);
    const run = await call(env.server, "POST", `/api/swarm/${swarmId}/run`, { rounds: 1 }, key);
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    // Two members, one round: two turns, each a tool call refused and one more answer.
    expect(env.fake.requests.length).toBeLessThanOrEqual(6);
    expect(JSON.stringify(env.fake.requests)).toContain("may not run a swarm");
  });

  it("starts no further turn once swarm::run has timed out", async () => {
    const realmId = await newRealm(env.server, "timed-out-run");
    const member = await createAgent(env.server, realmId);
    const swarm = await swarmOf([member], { realmId });
    env.fake.reply(
      { content: "abstain", delayMs: 400 },
      { content: "abstain", delayMs: 400 },
      { content: "abstain", delayMs: 400 },
    );
    const run = env.server.service.engine.trigger({
      function_id: "swarm::run",
      payload: { swarmId: swarm.swarmId, rounds: 3 },
      timeout_ms: 200,
    });
    await expect(run).rejects.toThrow(/timed out/);
    await sleep(1500);
    expect(env.fake.requests).toHaveLength(1);
  });
});

describe("a swarm across a restart", () => {
  it("indexes and expires swarms stored before the indexes, once", async () => {
    const first = await startTestServer();
    const realmId = await newRealm(first, "legacy");
    const key = await realmKey(first, realmId);
    let server = first;
    const state = (function_id: string, payload: Record<string, unknown>) =>
      server.service.engine.trigger({ function_id, payload });
    // As an earlier version stored them: the record, and an active one in swarms_active only.
    const old = (swarmId: string, expiresAt: string) => ({
      swarmId,
      realmId,
      goal: "old",
      agentIds: ["a"],
      maxDurationMs: 1000,
      consensusThreshold: 0.66,
      status: "active",
      messageCount: 0,
      createdAt: new Date(Date.parse(expiresAt) - 1000).toISOString(),
      expiresAt,
    });
    const past = new Date(Date.now() - 1000).toISOString();
    const later = new Date(Date.now() + 3_600_000).toISOString();
    for (const [swarmId, expiresAt] of [
      ["swm-old-due", past],
      ["swm-old-later", later],
    ] as const) {
      await state("state::set", { scope: "swarms", key: swarmId, value: old(swarmId, expiresAt) });
      await state("state::set", { scope: "swarms_active", key: swarmId, value: { expiresAt } });
    }
    await state("state::delete", { scope: "swarms_meta", key: "index_v1" });
    await first.service.close();
    server = await startTestServer({}, { dataDir: first.dataDir });
    try {
      await state("swarm::sweep", {});
      const list = await call(server, "GET", "/api/swarm", undefined, key);
      expect(list.body.swarms.map((swarm: { swarmId: string }) => swarm.swarmId).sort()).toEqual([
        "swm-old-due",
        "swm-old-later",
      ]);
      const due = (await state("state::get", { scope: "swarms", key: "swm-old-due" })) as { status: string };
      expect(due.status).toBe("expired");
      const active = await state("state::list", { scope: "swarms_active" });
      expect((active as { items: unknown[] }).items).toEqual([]);
    } finally {
      await server.close();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });

  it("expires while the service is down, at the next start", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agentos-swarm-"));
    const config = {
      ...loadConfig({
        AGENTOS_DATA_DIR: dir,
        AGENTOS_API_KEY: "swarm-admin-key-0123456789",
        AGENTOS_LOG_LEVEL: "silent",
      }),
      port: 0,
      host: "127.0.0.1",
      enginePort: 0,
      rateLimits: false as const,
    };
    try {
      const first = await createAgentOS(config);
      const swarm = (await first.engine.trigger({
        function_id: "swarm::create",
        payload: { goal: "g", agentIds: ["a"], maxDurationMs: 1000 },
      })) as { swarmId: string };
      await first.close();
      await sleep(1200);
      const second = await createAgentOS(config);
      try {
        await eventually(async () => {
          const stored = (await second.engine.trigger({
            function_id: "state::get",
            payload: { scope: "swarms", key: swarm.swarmId },
          })) as { status: string };
          return stored.status === "expired";
        }, 5000);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
