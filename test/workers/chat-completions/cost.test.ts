import { describe, expect, it } from "vitest";
import { createRealm, realmKey, recordTopic } from "../../helpers/control-plane.ts";
import { fakeCostEvent, serverWithFakeModel } from "../../helpers/fake-openai.ts";
import { json } from "../../helpers/server.ts";

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
    const events = recordTopic(env.server, "cost.incurred");
    expect((await complete()).status).toBe(200);
    await expect.poll(() => events.length).toBe(1);
    expect(events[0]).toEqual(
      fakeCostEvent({
        realmId: "realm-default",
        agentId: expect.stringMatching(/^apikey:/),
        sessionId: null,
      }),
    );
    expect(await keyIds()).toContain(String(events[0]?.agentId).slice("apikey:".length));
  });

  it("charges a realm-bound key's completion (streamed too) to its realm", async () => {
    const events = recordTopic(env.server, "cost.incurred");
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

describe("requests the provider would bill above the catalog's prices", () => {
  it.each([
    [{ service_tier: "priority" }, "service_tier may be auto, default or flex"],
    [{ web_search_options: {} }, "web_search_options is not supported"],
    [{ modalities: ["text", "audio"] }, "modalities may only be text"],
    [{ audio: { voice: "alloy", format: "mp3" } }, "audio output is not supported"],
  ])("refuses %o with a 400 naming the field, without calling the model", async (extra, words) => {
    const before = env.fake.requests.length;
    const response = await env.server.request("/v1/chat/completions", {
      method: "POST",
      json: { model: "gpt-4o", messages: [{ role: "user", content: "hi" }], ...extra },
    });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain(words);
    expect(env.fake.requests.length).toBe(before);
  });

  it("passes the tiers billed at the catalog's prices", async () => {
    for (const service_tier of ["auto", "default", "flex"]) {
      const response = await env.server.request("/v1/chat/completions", {
        method: "POST",
        json: { model: "gpt-4o", messages: [{ role: "user", content: "hi" }], service_tier },
      });
      expect(response.status).toBe(200);
    }
  });
});
