import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ACTS_FOR_AGENT } from "../../../src/engine/acting-agent.ts";
import type { InvocationContext } from "../../../src/engine/types.ts";
import { call, createAgent, createRealm } from "../../helpers/control-plane.ts";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";
import { json } from "../../helpers/server.ts";

const env = serverWithFakeModel();

type Sent = { model: string; messages: Array<{ role: string; content: unknown }> };

const message = (agentId: string, text = "hi") =>
  call(env.server, "POST", `/api/agents/${agentId}/message`, { message: text });

describe("agents in their realm", () => {
  it("take the realm's default model when the request names none", async () => {
    const realm = await createRealm(env.server, { defaultModel: "gpt-4o-mini" });
    const id = await createAgent(env.server, realm.id, { name: "a", model: undefined });
    expect((await call(env.server, "GET", `/api/agents/${id}`)).body.model).toBe("gpt-4o-mini");
    const named = await createAgent(env.server, realm.id, { name: "b", model: "gpt-4o" });
    expect((await call(env.server, "GET", `/api/agents/${named}`)).body.model).toBe("gpt-4o");
  });

  it("take no messages while their realm is paused or archived, and again once it is active", async () => {
    const realm = await createRealm(env.server);
    const id = await createAgent(env.server, realm.id, { name: "a" });
    await call(env.server, "PATCH", `/api/realms/${realm.id}`, { status: "Paused" });
    expect(await message(id)).toEqual({ status: 409, body: { error: `Realm ${realm.id} is paused` } });
    const v1 = await env.server.request("/v1/chat/completions", {
      method: "POST",
      json: { model: `agent:${id}`, messages: [{ role: "user", content: "hi" }] },
    });
    expect(v1.status).toBe(409);
    await expect(
      env.server.service.engine.trigger({
        function_id: "agent::chat",
        payload: { agentId: id, message: "x" },
      }),
    ).rejects.toThrow(`Realm ${realm.id} is paused`);
    expect(env.fake.requests).toHaveLength(0);
    await call(env.server, "PATCH", `/api/realms/${realm.id}`, { status: "Active" });
    expect((await message(id)).status).toBe(200);
    await call(env.server, "PATCH", `/api/realms/${realm.id}`, { status: "Archived" });
    expect(await message(id)).toEqual({ status: 409, body: { error: `Realm ${realm.id} is archived` } });
    expect(env.fake.requests).toHaveLength(1);
  });

  it("show the turn's context to the model in the system prompt", async () => {
    const id = await createAgent(env.server, "realm-default", {
      name: "a",
      systemPrompt: "You are a pulse.",
    });
    const context = { agentId: id, mode: "full", missions: [{ title: "Ship it" }] };
    await env.server.service.engine.trigger({
      function_id: "agent::chat",
      payload: { agentId: id, message: "tick", context },
    });
    const system = (env.fake.requests[0] as Sent).messages[0];
    expect(system?.role).toBe("system");
    expect(String(system?.content)).toContain(`Context:\n${JSON.stringify(context)}`);
    const bad = await call(env.server, "POST", `/api/agents/${id}/message`, {
      message: "x",
      context: "text",
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain("context");
  });

  it("run their tool calls as their own realm, whoever messaged them", async () => {
    const seen: InvocationContext["auth"][] = [];
    env.server.service.engine.worker("test").registerFunction({ id: "test::probe" }, (_input, ctx) => {
      seen.push(ctx.auth);
      return { ok: true };
    });
    const realm = await createRealm(env.server);
    const id = await createAgent(env.server, realm.id, { name: "a", tools: ["test::probe"] });
    env.fake.reply({ toolCalls: [{ name: "test__probe", arguments: {} }] }, { content: "done" });
    expect((await message(id)).status).toBe(200);
    env.fake.reply({ toolCalls: [{ name: "test__probe", arguments: {} }] }, { content: "done" });
    await env.server.service.engine.trigger({
      function_id: "agent::chat",
      payload: { agentId: id, message: "x" },
    });
    const principal = { kind: "realm", realmId: realm.id, keyId: `agent:${id}`, agentId: id };
    expect(seen).toEqual([principal, principal]);
  });

  it("act for themselves through a function that acts for its caller, whatever agentId the model writes", async () => {
    const seen: unknown[] = [];
    env.server.service.engine.worker("test").registerFunction(
      {
        id: "test::own",
        input: z.strictObject({ agentId: z.string(), note: z.string() }),
        metadata: ACTS_FOR_AGENT,
      },
      (input) => {
        seen.push(input);
        return { ok: true };
      },
    );
    const realm = await createRealm(env.server);
    const other = await createAgent(env.server, realm.id, { name: "other" });
    const id = await createAgent(env.server, realm.id, { name: "self", tools: ["test::own"] });
    env.fake.reply(
      { toolCalls: [{ name: "test__own", arguments: { agentId: other, note: "steered" } }] },
      { content: "done" },
    );
    expect((await message(id)).status).toBe(200);
    type Offered = { function: { name: string; parameters: { properties: Record<string, unknown> } } };
    const offered = env.fake.requests.at(-2)?.tools as Offered[];
    const tool = offered.find((entry) => entry.function.name === "test__own");
    expect(Object.keys(tool?.function.parameters.properties ?? {})).toEqual(["note"]);
    expect(seen).toEqual([{ agentId: id, note: "steered" }]);
  });

  it("say who is over which budget when the ledger gives no reason", async () => {
    env.server.service.engine.worker("ledger").registerFunction({ id: "ledger::check" }, () => ({
      allowed: false,
      spentCents: 1200,
      limitCents: 1000,
    }));
    const id = await createAgent(env.server, "realm-default", { name: "broke" });
    expect(await message(id)).toEqual({
      status: 402,
      body: { error: `agent ${id} exceeded budget: 1200/1000` },
    });
  });

  it("are purged with their realm's purge, which is idempotent", async () => {
    const realm = await createRealm(env.server);
    const ids = [
      await createAgent(env.server, realm.id, { name: "a" }),
      await createAgent(env.server, realm.id, { name: "b" }),
    ];
    const keep = await createAgent(env.server, "realm-default", { name: "keep" });
    const purge = () =>
      env.server.service.engine.trigger({
        function_id: "agent::purge_realm",
        payload: { realmId: realm.id },
      });
    expect(await purge()).toEqual({ purged: 2 });
    expect(await purge()).toEqual({ purged: 0 });
    for (const id of ids) expect((await call(env.server, "GET", `/api/agents/${id}`)).status).toBe(404);
    expect((await call(env.server, "GET", `/api/agents/${keep}`)).status).toBe(200);
    const listed = await json(await env.server.request(`/api/agents?realmId=${realm.id}`));
    expect(listed.agents).toEqual([]);
  });
});
