import OpenAI from "openai";
import { beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { serverWithFakeModel } from "../../helpers/fake-openai.ts";
import { json, TEST_ADMIN_KEY } from "../../helpers/server.ts";

// The official openai client, unchanged, against our /v1 endpoint; the model behind it is a fake on loopback.
const env = serverWithFakeModel();
let client: OpenAI;

type Sent = {
  messages: Array<{ role: string; content: unknown }>;
  tools?: Array<{ function: { name: string } }>;
};

beforeEach(() => {
  client = new OpenAI({ apiKey: TEST_ADMIN_KEY, baseURL: `${env.server.url}/v1`, maxRetries: 0 });
});

describe("POST /v1/chat/completions with the openai client", () => {
  it("completes with a catalog model, passing the full history", async () => {
    env.fake.reply({ content: "Paris." });
    const completion = await client.chat.completions.create({
      model: "gpt-4o",
      messages: [
        { role: "system", content: "Answer briefly." },
        { role: "user", content: "Capital of France?" },
        { role: "assistant", content: "Let me think." },
        { role: "user", content: "Well?" },
      ],
      temperature: 0.2,
    });
    expect(completion.choices[0]?.message.content).toBe("Paris.");
    expect(completion.choices[0]?.finish_reason).toBe("stop");
    expect(completion.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });
    expect((env.fake.requests[0] as Sent).messages.map((m) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "user",
    ]);
  });

  it("streams a completion chunk by chunk, ending with usage when asked", async () => {
    env.fake.reply({ content: "A streamed reply." });
    const stream = await client.chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "Go" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const pieces: string[] = [];
    let usage: unknown;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta.content;
      if (delta) pieces.push(delta);
      if (chunk.usage) usage = chunk.usage;
    }
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join("")).toBe("A streamed reply.");
    expect(usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 5 });
  });

  it("returns the model's calls of the client's own tools, and takes their results back", async () => {
    env.fake.reply({ toolCalls: [{ name: "lookup", arguments: { q: "x" } }] }, { content: "Found it." });
    const tools = [
      {
        type: "function" as const,
        function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } },
      },
    ];
    const first = await client.chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "find x" }],
      tools,
    });
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).toBe("tool_calls");
    expect(call?.type === "function" && call.function).toMatchObject({
      name: "lookup",
      arguments: '{"q":"x"}',
    });
    const second = await client.chat.completions.create({
      model: "gpt-4o",
      tools,
      messages: [
        { role: "user", content: "find x" },
        first.choices[0]?.message as OpenAI.ChatCompletionMessageParam,
        { role: "tool", tool_call_id: call?.id ?? "", content: "x is 42" },
      ],
    });
    expect(second.choices[0]?.message.content).toBe("Found it.");
    env.fake.reply({ toolCalls: [{ name: "lookup", arguments: { q: "y" } }] });
    await client.chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "find y" }],
      tools,
      tool_choice: { type: "function", function: { name: "lookup" } },
    });
    expect((env.fake.requests[2] as { tool_choice?: unknown }).tool_choice).toEqual({
      type: "function",
      function: { name: "lookup" },
    });
    expect(JSON.stringify((env.fake.requests[1] as Sent).messages.at(-1))).toContain("x is 42");
  });

  it("lets an agent answer when the model names it, with its prompt and its own tools", async () => {
    env.server.service.engine
      .worker("test")
      .registerFunction({ id: "test::clock", description: "The time", input: z.strictObject({}) }, () => ({
        time: "noon",
      }));
    const created = await json(
      await env.server.request("/api/agents", {
        method: "POST",
        json: { name: "timekeeper", model: "gpt-4o", systemPrompt: "You keep time.", tools: ["test::clock"] },
      }),
    );
    env.fake.reply({ toolCalls: [{ name: "test__clock", arguments: {} }] }, { content: "It is noon." });
    const completion = await client.chat.completions.create({
      model: `agent:${created.id}`,
      messages: [{ role: "user", content: "Time?" }],
    });
    expect(completion.choices[0]?.message.content).toBe("It is noon.");
    expect((env.fake.requests[0] as Sent).messages[0]).toEqual({ role: "system", content: "You keep time." });
    const byName = await client.chat.completions.create({
      model: "timekeeper",
      messages: [{ role: "user", content: "Again?" }],
      stream: true,
    });
    let text = "";
    for await (const chunk of byName) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("ok");
  });

  it("answers errors in OpenAI's shape", async () => {
    const missing = await client.chat.completions
      .create({ model: "no-such-model", messages: [{ role: "user", content: "x" }] })
      .catch((e) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect(missing.error).toMatchObject({ type: "invalid_request_error", code: "model_not_found" });
    const invalid = await client.chat.completions.create({ model: "gpt-4o", messages: [] }).catch((e) => e);
    expect(invalid).toBeInstanceOf(OpenAI.BadRequestError);
    expect(invalid.message).toContain("messages");
    const unauthorized = await new OpenAI({
      apiKey: "wrong-key-0123456789",
      baseURL: `${env.server.url}/v1`,
      maxRetries: 0,
    }).models
      .list()
      .catch((e) => e);
    expect(unauthorized).toBeInstanceOf(OpenAI.AuthenticationError);
  });
});

describe("GET /v1/models", () => {
  it("lists catalog models and agents", async () => {
    const created = await json(
      await env.server.request("/api/agents", { method: "POST", json: { name: "a", model: "gpt-4o" } }),
    );
    const ids = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).toContain("gpt-4o");
    expect(ids).toContain(`agent:${created.id}`);
  });

  it("retrieves one model: a catalog id, an alias (as its id), an agent; an unknown one is OpenAI's 404", async () => {
    const created = await json(
      await env.server.request("/api/agents", { method: "POST", json: { name: "one", model: "gpt-4o" } }),
    );
    expect(await client.models.retrieve("gpt-4o")).toMatchObject({
      id: "gpt-4o",
      object: "model",
      owned_by: "openai",
    });
    expect((await client.models.retrieve("sonnet")).id).toBe("claude-sonnet-4-6");
    expect(await client.models.retrieve(`agent:${created.id}`)).toMatchObject({ owned_by: "agentos" });
    const missing = await client.models.retrieve("gpt-9000").catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((missing as InstanceType<typeof OpenAI.NotFoundError>).message).toContain("gpt-9000");
  });
});

describe("POST /v1/embeddings", () => {
  it("passes an OpenAI embedding request through, charging its tokens to the key's account", async () => {
    const answer = await client.embeddings.create({
      model: "text-embedding-3-small",
      input: ["hello world", "bye"],
      encoding_format: "float",
    });
    expect(answer.data.map((item) => item.embedding)).toEqual([
      [11, 104, 0.5],
      [3, 98, 0.5],
    ]);
    expect(answer.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    const sent = env.fake.requests.at(-1) as { embeddings: { model: string; input: string[] } };
    expect(sent.embeddings).toMatchObject({ model: "text-embedding-3-small", input: ["hello world", "bye"] });
    const summary = await json(await env.server.request("/api/ledger/summary/realm-default?groupBy=model"));
    expect(summary.breakdown["text-embedding-3-small"]).toBeCloseTo(((3 * 0.02) / 1e6) * 100, 9);
  });

  it("names what is wrong: an unknown model (404), a provider without the endpoint (400), no input (400)", async () => {
    const failure = (request: Promise<unknown>) =>
      request.then(
        () => null,
        (error: unknown) => error,
      );
    const unknown = await failure(client.embeddings.create({ model: "gpt-4o", input: "x" }));
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect((unknown as Error).message).toContain("text-embedding-3-small");
    const anthropic = await failure(
      client.embeddings.create({ model: "anthropic/claude-embed", input: "x" }),
    );
    expect((anthropic as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect((anthropic as Error).message).toContain("anthropic");
    const empty = await failure(client.embeddings.create({ model: "text-embedding-3-small", input: [] }));
    expect((empty as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
  });
});
