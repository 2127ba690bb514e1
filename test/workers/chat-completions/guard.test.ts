import { describe, expect, it } from "vitest";
import { call, createRealm, spentBudget } from "../../helpers/control-plane.ts";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";
import { type JsonBody, json } from "../../helpers/server.ts";

/**
 * Plain completions (a catalog model, no agent) are charged to the key's account (`apikey:<keyId>` in
 * its realm, or the default realm for an admin key): the ledger is asked before the model call and the
 * realm's status applies, exactly as for an agent's message.
 */
const env = serverWithFakeModel();

const complete = (key: string | undefined, stream = false) =>
  env.server.request("/v1/chat/completions", {
    method: "POST",
    ...(key ? { key } : {}),
    json: { model: "gpt-4o", messages: [{ role: "user", content: "hi" }], stream },
  });

/** A realm with a key bound to it: the key and its id (the account is `apikey:<id>`). */
async function realmWithKey(): Promise<{ realmId: string; key: string; keyId: string }> {
  const realmId = (await createRealm(env.server)).id;
  const created = await call(env.server, "POST", "/api/keys", { name: "tenant", realmId });
  expect(created.status).toBe(201);
  return { realmId, key: created.body.key, keyId: created.body.id };
}

async function storedSpends(realmId: string): Promise<JsonBody[]> {
  const page = (await env.server.service.engine.trigger({
    function_id: "state::list",
    payload: { scope: `ledger_spend:${realmId}`, limit: 1000 },
  })) as { items: Array<{ value: JsonBody }> };
  return page.items.map((item) => item.value);
}

describe("plain chat completions respect the ledger", () => {
  it("refuses with 402 (OpenAI's error shape) under a spent hard realm budget, streamed or not, before calling the model", async () => {
    const { realmId, key } = await realmWithKey();
    await spentBudget(env.server, realmId);
    const before = (await storedSpends(realmId)).length;

    for (const stream of [false, true]) {
      const response = await complete(key, stream);
      expect(response.status, `stream: ${stream}`).toBe(402);
      expect(await json(response)).toEqual({
        error: {
          message: expect.stringMatching(/exceeded budget: 1\/1/),
          type: "invalid_request_error",
          code: "budget_exceeded",
        },
      });
    }
    expect(env.fake.requests).toEqual([]);
    expect(await storedSpends(realmId)).toHaveLength(before);
  });

  it("asks the ledger for the key's account (agentId apikey:<keyId>) and reports the check's reason", async () => {
    const { realmId, key, keyId } = await realmWithKey();
    const budget = { realmId, monthlyCents: 1, hardLimit: true };
    expect((await call(env.server, "POST", "/api/ledger/budget", budget)).status).toBe(200);
    // The realm's whole cent spent by the key's account: the check refuses.
    const spend = await call(env.server, "POST", "/api/ledger/spend", {
      realmId,
      agentId: `apikey:${keyId}`,
      costCents: 1,
      provider: "openai",
      model: "gpt-4o",
      inputTokens: 1,
      outputTokens: 1,
    });
    expect(spend.status).toBe(201);
    const refused = await complete(key);
    expect(refused.status).toBe(402);
    expect((await json(refused)).error.message).toBe(
      `agent apikey:${keyId} exceeded budget: 1/1 (US cents spent of realm ${realmId}'s monthly budget; raise it with POST /api/ledger/budget)`,
    );
  });

  it("counts a completion that costs more than the budget has left, and refuses the next one", async () => {
    const { realmId, key, keyId } = await realmWithKey();
    const budget = { realmId, monthlyCents: 1, hardLimit: true };
    expect((await call(env.server, "POST", "/api/ledger/budget", budget)).status).toBe(200);
    const nearlySpent = await call(env.server, "POST", "/api/ledger/spend", {
      realmId,
      agentId: `apikey:${keyId}`,
      costCents: 0.995,
      provider: "openai",
      model: "gpt-4o",
      inputTokens: 1,
      outputTokens: 1,
    });
    expect(nearlySpent.status).toBe(201);
    // Allowed (0.995 < 1), and it costs 0.008 ¢ (12 + 5 tokens of gpt-4o): past the limit once answered.
    env.fake.reply({ content: "the last one" });
    expect((await complete(key)).status).toBe(200);
    const check = await call(env.server, "GET", `/api/ledger/check/${realmId}/apikey:${keyId}`);
    expect(check.body).toMatchObject({ allowed: false, spentCents: 1.003 });
    const calls = env.fake.requests.length;
    expect((await complete(key)).status).toBe(402);
    expect(env.fake.requests.length).toBe(calls);
  });

  it("charges a stream the client leaves before its usage came, as estimated from what was sent and streamed", async () => {
    const { realmId, key, keyId } = await realmWithKey();
    env.fake.reply({ content: "x".repeat(400), stall: true });
    const response = await complete(key, true);
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let received = "";
    while (!received.includes("xxxx")) received += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    // 400 characters streamed: about 100 output tokens of gpt-4o ($10 per million) and a few input tokens.
    let spent = 0;
    for (let attempt = 0; attempt < 100 && spent === 0; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const summary = await call(env.server, "GET", `/api/ledger/summary/${realmId}`);
      spent = summary.body.totalCents ?? 0;
    }
    expect(spent).toBeGreaterThan(0.09);
    expect(spent).toBeLessThan(0.2);
    const spends = await storedSpends(realmId);
    expect(spends).toEqual([expect.objectContaining({ agentId: `apikey:${keyId}`, status: "accepted" })]);
  });

  it("charges and checks an admin key's completions in the default realm", async () => {
    await spentBudget(env.server, "realm-default");
    expect((await complete(undefined)).status).toBe(402);
    expect(env.fake.requests).toEqual([]);
  });

  it("allows when there is no budget at all (fail-safe)", async () => {
    const { key } = await realmWithKey();
    expect((await complete(key)).status).toBe(200);
    const streamed = await complete(key, true);
    expect(streamed.status).toBe(200);
    expect(await streamed.text()).toContain("data: [DONE]");
  });
});

describe("the ledger check of plain completions is fail-safe", () => {
  it("lets the call go ahead when the ledger fails or is not running", async () => {
    const { realmId, key } = await realmWithKey();
    await spentBudget(env.server, realmId);
    const { engine } = env.server.service;
    engine.worker("broken-ledger").registerFunction({ id: "ledger::check" }, () => {
      throw new Error("ledger store is down");
    });
    expect((await complete(key)).status).toBe(200);
    engine.unregisterFunction("ledger::check");
    expect((await complete(key, true)).status).toBe(200);
  });
});

describe("plain chat completions respect the realm's status", () => {
  it.each([
    ["Paused", "is paused"],
    ["Archived", "is archived"],
  ])("refuses a %s realm's key with 409, streamed or not", async (status, words) => {
    const { realmId, key } = await realmWithKey();
    expect((await call(env.server, "PATCH", `/api/realms/${realmId}`, { status })).status).toBe(200);
    for (const stream of [false, true]) {
      const response = await complete(key, stream);
      expect(response.status, `stream: ${stream}`).toBe(409);
      expect(await json(response)).toEqual({
        error: { message: `Realm ${realmId} ${words}`, type: "invalid_request_error", code: "conflict" },
      });
    }
    expect(env.fake.requests).toEqual([]);
  });

  it("answers again once the operator resumes the realm", async () => {
    const { realmId, key } = await realmWithKey();
    await call(env.server, "PATCH", `/api/realms/${realmId}`, { status: "Paused" });
    expect((await complete(key)).status).toBe(409);
    await call(env.server, "PATCH", `/api/realms/${realmId}`, { status: "Active" });
    expect((await complete(key)).status).toBe(200);
  });
});
