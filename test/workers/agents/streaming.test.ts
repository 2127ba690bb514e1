import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { serverSentEvents } from "../../../src/shared/sse.ts";
import { call, createAgent, newRealm, realmKey, spentBudget } from "../../helpers/control-plane.ts";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";
import { TEST_ADMIN_KEY } from "../../helpers/server.ts";

const env = serverWithFakeModel({}, { shared: true });

const HASH_CALL = { name: "tool__hash_compute", arguments: { text: "abc" } };
const ABC_SHA256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

/** The server-sent events of a response, parsed, one at a time as they arrive. */
async function* events(response: Response): AsyncGenerator<{ event: string; data: unknown }> {
  for await (const { event, data } of serverSentEvents(response.body as AsyncIterable<Uint8Array>)) {
    yield { event, data: JSON.parse(data) };
  }
}

describe("an agent's turn streamed from the message route", () => {
  it("tells the start, each tool call and result (by function id), and the text as they happen, then the reply", async () => {
    const id = await createAgent(env.server, await newRealm(env.server), { tools: ["tool::hash_compute"] });
    // The second model call waits: everything before it must have reached the client already.
    env.fake.reply({ toolCalls: [HASH_CALL] }, { content: "The hash is ready.", delayMs: 400 });
    const requestsBefore = env.fake.requests.length;
    const response = await env.server.request(`/api/agents/${id}/message`, {
      method: "POST",
      json: { message: "hash abc", stream: true },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const seen: Array<{ event: string; data: any }> = [];
    for await (const event of events(response)) {
      if (event.event === "tool_result") {
        // Told while the model is still working on its answer.
        await expect.poll(() => env.fake.requests.length).toBe(requestsBefore + 2);
        expect(seen.some((earlier) => earlier.event === "done")).toBe(false);
      }
      seen.push(event);
    }
    const kinds = seen.map((event) => event.event);
    expect(kinds.slice(0, 3)).toEqual(["start", "tool_call", "tool_result"]);
    expect(kinds.filter((kind) => kind === "text").length).toBeGreaterThan(1);
    expect(kinds.at(-1)).toBe("done");
    expect(seen[0].data).toMatchObject({ model: "gpt-4o", sessionId: expect.stringMatching(/^session-/) });
    // Tools are told by their function ids, not by the names the model had to use.
    expect(seen[1].data).toMatchObject({ toolName: "tool::hash_compute", input: { text: "abc" } });
    expect(seen[2].data).toMatchObject({ toolName: "tool::hash_compute" });
    expect(JSON.stringify(seen[2].data.output)).toContain(ABC_SHA256);
    const text = seen.filter((event) => event.event === "text").map((event) => event.data.text);
    expect(text.join("")).toBe("The hash is ready.");
    const done = seen.at(-1)?.data;
    expect(done).toMatchObject({ content: "The hash is ready.", sessionId: seen[0].data.sessionId });
    expect(done.toolCalls[0].toolName).toBe("tool::hash_compute");
    // Stored as it was told.
    const session = await call(env.server, "GET", `/api/agents/${id}/sessions/${done.sessionId}`);
    expect(session.body.messages.at(-1)).toMatchObject({ role: "assistant", content: "The hash is ready." });
  });

  it("charges the step under way when the client leaves mid-answer, as estimated", async () => {
    const realmId = await newRealm(env.server);
    const id = await createAgent(env.server, realmId);
    env.fake.reply({ content: "z".repeat(400), stall: true });
    const controller = new AbortController();
    const response = await env.server.request(`/api/agents/${id}/message`, {
      method: "POST",
      json: { message: "tell me everything", stream: true },
      signal: controller.signal,
    });
    let text = "";
    for await (const event of events(response)) {
      if (event.event === "text") text += (event.data as { text: string }).text;
      if (text.length >= 40) break;
    }
    controller.abort();
    let spent = 0;
    for (let attempt = 0; attempt < 100 && spent === 0; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      spent = (await call(env.server, "GET", `/api/ledger/summary/${realmId}`)).body.totalCents ?? 0;
    }
    // At least the text the client got (40 characters: 10 tokens of gpt-4o output at $10 per million).
    expect(spent).toBeGreaterThanOrEqual(0.01);
  });

  it("is asked for by Accept: text/event-stream too; stream: false keeps the JSON reply", async () => {
    const id = await createAgent(env.server, await newRealm(env.server));
    const accepted = await env.server.request(`/api/agents/${id}/message`, {
      method: "POST",
      json: { message: "hi" },
      headers: { accept: "text/event-stream" },
    });
    expect(accepted.headers.get("content-type")).toContain("text/event-stream");
    await accepted.text();
    const plain = await env.server.request(`/api/agents/${id}/message`, {
      method: "POST",
      json: { message: "hi", stream: false },
      headers: { accept: "text/event-stream" },
    });
    expect(((await plain.json()) as { content: string }).content).toBe("ok");
  });

  it("refuses before the stream opens: a paused realm is a 409 JSON reply, not an event", async () => {
    const realmId = await newRealm(env.server);
    const id = await createAgent(env.server, realmId);
    expect((await call(env.server, "PATCH", `/api/realms/${realmId}`, { status: "Paused" })).status).toBe(
      200,
    );
    const response = await env.server.request(`/api/agents/${id}/message`, {
      method: "POST",
      json: { message: "hi", stream: true },
    });
    expect(response.status).toBe(409);
    expect(((await response.json()) as { error: string }).error).toContain("paused");
  });
});

describe("an agent's turn streamed on /v1 to the official client", () => {
  const client = (apiKey = TEST_ADMIN_KEY) =>
    new OpenAI({ apiKey, baseURL: `${env.server.url}/v1`, maxRetries: 0 });

  it("arrives chunk by chunk: the tool call as OpenAI streams one, then the text, then stop", async () => {
    const id = await createAgent(env.server, await newRealm(env.server), { tools: ["tool::hash_compute"] });
    env.fake.reply({ toolCalls: [HASH_CALL] }, { content: "Hashed it for you." });
    const stream = await client().chat.completions.create({
      model: `agent:${id}`,
      messages: [{ role: "user", content: "hash abc" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0].choices[0].delta).toMatchObject({ role: "assistant" });
    expect(chunks[0].model).toBe("gpt-4o");
    const toolDelta = chunks.find((chunk) => chunk.choices[0]?.delta.tool_calls);
    expect(toolDelta?.choices[0].delta.tool_calls?.[0]).toMatchObject({
      index: 0,
      type: "function",
      function: { name: "tool__hash_compute", arguments: JSON.stringify({ text: "abc" }) },
    });
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("");
    expect(text).toBe("Hashed it for you.");
    expect(chunks.filter((chunk) => chunk.choices[0]?.delta.content).length).toBeGreaterThan(1);
    expect(chunks.find((chunk) => chunk.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe("stop");
    expect(chunks.at(-1)?.usage?.total_tokens).toBeGreaterThan(0);
  });

  it("answers an agent over budget with a real 402 before the first byte", async () => {
    const realmId = await newRealm(env.server);
    const id = await createAgent(env.server, realmId);
    await spentBudget(env.server, realmId, id);
    const key = await realmKey(env.server, realmId);
    const refused = await client(key)
      .chat.completions.create({
        model: `agent:${id}`,
        messages: [{ role: "user", content: "hi" }],
        stream: true,
      })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
  });
});

describe("an agent's /v1 conversations kept as sessions", () => {
  const client = () => new OpenAI({ apiKey: TEST_ADMIN_KEY, baseURL: `${env.server.url}/v1`, maxRetries: 0 });
  const sessions = async (id: string) => (await call(env.server, "GET", `/api/agents/${id}/sessions`)).body;

  it("continues one session while the client sends the conversation back; a new one starts another", async () => {
    const id = await createAgent(env.server, await newRealm(env.server));
    const ask = (messages: OpenAI.ChatCompletionMessageParam[]) =>
      client().chat.completions.create({ model: `agent:${id}`, messages });
    env.fake.reply({ content: "Hello there." }, { content: "Twice now." }, { content: "Fresh start." });
    const first = await ask([
      { role: "system", content: "Be brief." },
      { role: "user", content: "hi" },
    ]);
    await ask([
      { role: "system", content: "Be brief." },
      { role: "user", content: "hi" },
      { role: "assistant", content: first.choices[0].message.content },
      { role: "user", content: "again" },
    ]);
    await ask([{ role: "user", content: "something else" }]);
    const listed = await sessions(id);
    const all = listed.sessions ?? listed;
    expect(all).toHaveLength(2);
    const messagesOf = async (sessionId: string) =>
      (await call(env.server, "GET", `/api/agents/${id}/sessions/${sessionId}`)).body.messages.map(
        (m: { role: string; content: string }) => `${m.role}: ${m.content}`,
      );
    const contents = await Promise.all(all.map((session: { id: string }) => messagesOf(session.id)));
    expect(contents).toContainEqual([
      "user: hi",
      "assistant: Hello there.",
      "user: again",
      "assistant: Twice now.",
    ]);
    expect(contents).toContainEqual(["user: something else", "assistant: Fresh start."]);
  });

  it("keeps nothing when the client says store: false", async () => {
    const id = await createAgent(env.server, await newRealm(env.server));
    await client().chat.completions.create({
      model: `agent:${id}`,
      messages: [{ role: "user", content: "off the record" }],
      store: false,
    });
    const listed = await sessions(id);
    expect(listed.sessions ?? listed).toHaveLength(0);
  });
});
