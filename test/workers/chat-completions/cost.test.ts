import { describe, expect, it } from "vitest";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";
import { json } from "../../helpers/server.ts";
import { createRealm, realmKey, subscribe } from "../realm/helpers.ts";

const env = serverWithFakeModel();

const complete = (key?: string, stream = false) =>
  env.server.request("/v1/chat/completions", {
    method: "POST",
    ...(key ? { key } : {}),
    json: { model: "gpt-4o", messages: [{ role: "user", content: "hi" }], stream },
  });

/** Key ids as the key listing shows them, to recognise `apikey:<keyId>`. */
async function keyIds(): Promise<string[]> {
  const listed = await json(await env.server.request("/api/keys"));
  return (listed.keys ?? listed).map((k: { id: string }) => k.id);
}

describe("plain completions are accounted on cost.incurred", () => {
  it("charges an admin key's completion to the default realm, in ledger::spend's shape", async () => {
    const events = subscribe(env.server, "cost.incurred");
    expect((await complete()).status).toBe(200);
    await expect.poll(() => events.length).toBe(1);
    const cost = (12 * 2.5 + 5 * 10) / 1e6;
    expect(events[0]).toEqual({
      realmId: "realm-default",
      agentId: expect.stringMatching(/^apikey:/),
      costCents: expect.closeTo(cost * 100, 6),
      provider: "openai",
      model: "gpt-4o",
      inputTokens: 12,
      outputTokens: 5,
      eventId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      sessionId: null,
      cost: expect.closeTo(cost, 10),
      at: expect.any(String),
    });
    expect(await keyIds()).toContain(String(events[0]?.agentId).slice("apikey:".length));
  });

  it("charges a realm-bound key's completion (streamed too) to its realm", async () => {
    const events = subscribe(env.server, "cost.incurred");
    const realm = await createRealm(env.server);
    const key = await realmKey(env.server, realm.id);
    expect((await complete(key)).status).toBe(200);
    const streamed = await complete(key, true);
    await streamed.text();
    await expect.poll(() => events.length).toBe(2);
    for (const event of events)
      expect(event).toMatchObject({ realmId: realm.id, agentId: expect.stringMatching(/^apikey:/) });
    expect(events[0]?.eventId).not.toBe(events[1]?.eventId);
  });
});
