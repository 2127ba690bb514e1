import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { speaksOpenAi } from "../../src/llm/openai/client.ts";
import { forwardCompletion, forwardStream, serverSentData } from "../../src/llm/passthrough.ts";
import type { ModelChoice, Usage } from "../../src/llm/types.ts";
import { MAX_EVENT_CHARS } from "../../src/shared/sse.ts";
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

  it("never passes on the operator's API key when the provider's error words repeat it", async () => {
    // Some gateways (proxies in front of a provider) quote the key they were sent in their errors.
    const echoing = createServer((request, response) => {
      request.resume();
      const key = String(request.headers.authorization).slice("Bearer ".length);
      // The key across the 300th character, where the detail is cut.
      const message = `${"x".repeat(270)} Invalid model for key ${key}; see the docs`;
      response.writeHead(400, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { message } }));
    });
    await new Promise<void>((resolve) => echoing.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = echoing.address() as AddressInfo;
      const request = forwardRequest({ model: "fake-model", messages: [{ role: "user", content: "x" }] });
      request.choice = choiceFor(`http://127.0.0.1:${port}/v1`);
      request.env = { FAKEAI_API_KEY: "sk-operator-0123456789" };
      const error = await forwardCompletion(request).catch((failure: Error) => failure);
      expect(error).toMatchObject({ status: 502, message: expect.stringContaining("answered HTTP 400") });
      // Not the key, nor the part of it the message's 300 characters would have kept.
      expect((error as Error).message).toContain("Invalid model for key ");
      expect((error as Error).message).not.toContain("sk-op");
    } finally {
      echoing.close();
    }
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

  it("ends with an error, without relaying it, when a provider's event grows past its limit without ending", async () => {
    // A broken or hostile provider: one event that never ends. Scanned anew with every chunk, such an
    // event cost time in the square of its size (64 MB: a minute of the service's thread).
    const endless = createServer((request, response) => {
      request.resume();
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("data: ");
      const chunk = "x".repeat(64 * 1024);
      let sent = 0;
      const pump = () => {
        while (sent < MAX_EVENT_CHARS + 4 * chunk.length) {
          sent += chunk.length;
          if (!response.write(chunk)) return void response.once("drain", pump);
        }
        response.end("\n\n");
      };
      pump();
    });
    await new Promise<void>((resolve) => endless.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = endless.address() as AddressInfo;
      const request = forwardRequest({
        model: "fake-model",
        messages: [{ role: "user", content: "x" }],
        stream: true,
      });
      request.choice = choiceFor(`http://127.0.0.1:${port}/v1`);
      const relayed = await collect(await forwardStream(request));
      expect(relayed.length).toBeLessThan(1000);
      expect(relayed).toMatch(
        /^data: \{"error":\{"message":"Provider fakeai gave no usable answer for model fake-model: .*server-sent event of more than/,
      );
      expect(relayed.endsWith("data: [DONE]\n\n")).toBe(true);
    } finally {
      endless.closeAllConnections();
      endless.close();
    }
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
  it("refuses an event longer than its limit, and takes one up to it", async () => {
    async function* chunks(text: string) {
      for (let at = 0; at < text.length; at += 7) yield text.slice(at, at + 7);
    }
    const read = async (text: string) => {
      const seen: string[] = [];
      for await (const data of serverSentData(chunks(text), 64)) seen.push(data);
      return seen;
    };
    const fits = `data: ${"a".repeat(56)}`;
    expect(await read(`${fits}\n\n${fits}\r\n\r\n`)).toEqual(["a".repeat(56), "a".repeat(56)]);
    await expect(read(`data: ${"a".repeat(100)}\n\n`)).rejects.toThrow(
      "a server-sent event of more than 64 characters",
    );
  });

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
