import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { speaksOpenAi } from "../../src/llm/openai/client.ts";
import { forwardCompletion, forwardStream, serverSentData } from "../../src/llm/passthrough.ts";
import type { ModelChoice, Usage } from "../../src/llm/types.ts";
import { type FakeOpenAI, fakeModelChoice, startFakeOpenAI } from "../helpers/fake-openai.ts";

let fake: FakeOpenAI;
const noVault = async () => null;

const choiceFor = fakeModelChoice;

function forwardRequest(body: Record<string, unknown>, usages: Usage[] = []) {
  return {
    choice: choiceFor(fake.baseUrl),
    body,
    env: { FAKEAI_API_KEY: "sk-test" },
    trigger: noVault,
    onUsage: async (usage: Usage) => {
      usages.push(usage);
    },
  };
}

beforeEach(async () => {
  fake = await startFakeOpenAI();
});
afterEach(async () => {
  await fake.close();
});

describe("forwardCompletion", () => {
  it("sends the client's body with the catalog's model id and returns the provider's answer and usage", async () => {
    fake.reply({ content: "Hello" });
    const usages: Usage[] = [];
    const body = {
      model: "alias-of-fake",
      messages: [{ role: "user", content: "Hi" }],
      response_format: { type: "json_object" },
      seed: 7,
    };
    const answer = JSON.parse(await forwardCompletion(forwardRequest(body, usages)));
    expect(answer.choices[0].message.content).toBe("Hello");
    expect(fake.requests[0]).toEqual({ ...body, model: "fake-model" });
    expect(usages).toEqual([{ inputTokens: 12, outputTokens: 5, totalTokens: 17 }]);
  });

  it("retries a 429 after the provider's Retry-After, then answers", async () => {
    fake.reply({ status: 429, retryAfter: "0" }, { content: "after retry" });
    const answer = JSON.parse(
      await forwardCompletion(
        forwardRequest({ model: "fake-model", messages: [{ role: "user", content: "x" }] }),
      ),
    );
    expect(answer.choices[0].message.content).toBe("after retry");
    expect(fake.requests).toHaveLength(2);
  });

  it("reports the provider's refusal with its status and message, without retrying a 4xx", async () => {
    fake.reply({ status: 400 });
    await expect(
      forwardCompletion(forwardRequest({ model: "fake-model", messages: [{ role: "user", content: "x" }] })),
    ).rejects.toMatchObject({
      status: 502,
      message: expect.stringMatching(/fakeai answered HTTP 400 for model fake-model: fake error 400/),
    });
    expect(fake.requests).toHaveLength(1);
  });

  it("says when the provider cannot be reached", async () => {
    const request = forwardRequest({ model: "fake-model", messages: [{ role: "user", content: "x" }] });
    request.choice = choiceFor("http://127.0.0.1:1/v1");
    await expect(forwardCompletion({ ...request, maxRetries: 0 })).rejects.toMatchObject({
      status: 502,
      message: expect.stringContaining("fakeai is unreachable at http://127.0.0.1:1/v1"),
    });
  });

  it("gives up after the timeout", async () => {
    fake.reply({ hang: true });
    const request = forwardRequest({ model: "fake-model", messages: [{ role: "user", content: "x" }] });
    await expect(forwardCompletion({ ...request, timeoutMs: 200 })).rejects.toMatchObject({ status: 504 });
  });
});

describe("forwardStream", () => {
  const collect = async (events: AsyncIterable<string>) => {
    let text = "";
    for await (const event of events) text += event;
    return text;
  };

  it("relays the events and records the usage, which the client sees only when it asked", async () => {
    fake.reply({ content: "A streamed reply." }, { content: "again" });
    const usages: Usage[] = [];
    const body = { model: "fake-model", messages: [{ role: "user", content: "x" }], stream: true };
    const plain = await collect(await forwardStream(forwardRequest(body, usages)));
    expect(fake.requests[0]).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(plain).not.toContain('"usage"');
    expect(plain.endsWith("data: [DONE]\n\n")).toBe(true);
    const deltas = [...plain.matchAll(/"content":"([^"]*)"/g)].map((match) => match[1]).join("");
    expect(deltas).toBe("A streamed reply.");
    const withUsage = await collect(
      await forwardStream(forwardRequest({ ...body, stream_options: { include_usage: true } }, usages)),
    );
    expect(withUsage).toContain('"usage":{"prompt_tokens":12');
    expect(usages).toHaveLength(2);
  });

  it("refuses before the stream opens when the provider refuses", async () => {
    fake.reply({ status: 401 });
    const body = { model: "fake-model", messages: [{ role: "user", content: "x" }], stream: true };
    await expect(forwardStream(forwardRequest(body))).rejects.toMatchObject({
      status: 502,
      message: expect.stringContaining("rejected the API key (HTTP 401)"),
    });
  });
});

describe("serverSentData", () => {
  it("yields each event's data however the bytes are split", async () => {
    const payload = fc.string({ maxLength: 20 }).filter((text) => !/[\r\n]/.test(text));
    await fc.assert(
      fc.asyncProperty(
        fc.array(payload, { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.boolean(),
        async (datas, cuts, crlf) => {
          const newline = crlf ? "\r\n" : "\n";
          const text = datas.map((data) => `: comment${newline}data: ${data}${newline}${newline}`).join("");
          const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
          const pieces = [0, ...points, text.length]
            .slice(1)
            .map((end, index, ends) => text.slice(index === 0 ? 0 : ends[index - 1], end));
          async function* chunks() {
            yield* pieces;
          }
          const seen: string[] = [];
          for await (const data of serverSentData(chunks())) seen.push(data);
          expect(seen).toEqual(datas);
        },
      ),
    );
  });
});

describe("speaksOpenAi", () => {
  it("covers OpenAI and OpenAI-compatible providers, not Anthropic or Google", () => {
    const with_ = (driver: ModelChoice["provider"]["driver"]) => {
      const choice = choiceFor("");
      return speaksOpenAi({ ...choice, provider: { ...choice.provider, driver } });
    };
    expect([with_("openai"), with_("openai_compat"), with_("anthropic"), with_("google")]).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });
});
