import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeBase64Vector } from "../../../src/llm/openai/embeddings.ts";
import { hashedEmbedding } from "../../helpers/hashed-embedder.ts";
import type { TestServer } from "../../helpers/server.ts";
import { backends, eventually, newAgent, remember, send, status } from "./embedding-env.ts";

const DIMENSIONS = 64;

/** What the provider makes of a text: a good vector, or one no index can take. */
const ANSWERS = {
  good: (text: string) => Array.from(hashedEmbedding(text, DIMENSIONS)),
  nan: () => new Array(DIMENSIONS).fill(Number.NaN),
  infinite: () => new Array(DIMENSIONS).fill(Number.POSITIVE_INFINITY),
  zero: () => new Array(DIMENSIONS).fill(0),
  shorter: () => Array.from({ length: DIMENSIONS / 4 }, (_, i) => i + 1),
};
type Answer = keyof typeof ANSWERS;

/** text-embedding-3-small's input limit, in tokens. */
const MAX_INPUT_TOKENS = 8191;

/**
 * Fewer tokens than any tokenizer OpenAI uses makes of the text: one per character beyond ASCII (a rare
 * CJK character takes two or three), one per 8 ASCII characters (English runs about 4).
 */
const fewestTokens = (text: string) => {
  const chars = [...text];
  const ascii = chars.filter((char) => (char.codePointAt(0) ?? 0) < 128).length;
  return chars.length - ascii + Math.ceil(ascii / 8);
};

/**
 * An OpenAI-compatible embeddings host that answers whatever `answer` says, in base64 (as OpenAI is
 * asked): float32s can carry NaN and ±Infinity, which JSON numbers cannot. As OpenAI, it refuses the
 * whole request (400) when one input is longer than the model takes.
 */
function hostileProvider(answer: () => Answer, inputs: string[]): Server {
  return createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { model: string; input: unknown };
    const texts = (Array.isArray(body.input) ? body.input : [body.input]).map(String);
    inputs.push(...texts);
    const tooLong = texts.find((text) => fewestTokens(text) > MAX_INPUT_TOKENS);
    if (tooLong !== undefined) {
      const message = `This model's maximum context length is 8192 tokens, however you requested ${fewestTokens(tooLong)} tokens`;
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message, type: "invalid_request_error" } }));
      return;
    }
    const data = texts.map((text, index) => ({
      object: "embedding",
      index,
      embedding: encodeBase64Vector(ANSWERS[answer()](text)),
    }));
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ object: "list", data, model: body.model, usage: { prompt_tokens: 3 } }));
  });
}

describe.each(backends)("memory embeddings with a provider answering unusable vectors ($name)", (backend) => {
  let answer: Answer = "good";
  const inputs: string[] = [];
  const provider = hostileProvider(() => answer, inputs);
  let storage: Awaited<ReturnType<typeof backend.storage>>;
  let live: TestServer;

  beforeAll(async () => {
    await new Promise<void>((resolve) => provider.listen(0, "127.0.0.1", resolve));
    const { port } = provider.address() as AddressInfo;
    storage = await backend.storage();
    live = await storage.start({ OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` });
  });
  afterAll(async () => {
    await live?.close();
    await storage?.drop();
    await new Promise((resolve) => provider.close(resolve));
  });

  it.each([
    ["nan", "value 0 is not a finite number"],
    ["infinite", "value 0 is not a finite number"],
    ["zero", "has no direction (zero or too large)"],
    ["shorter", `16 dimensions, but the model's vectors have ${DIMENSIONS}`],
  ] as const)(
    "answers hybrid recall by text, and vector recall 502 naming the provider, for a %s query vector",
    async (bad, problem) => {
      answer = "good";
      const agentId = await newAgent(live, "text-embedding-3-small");
      await remember(live, agentId, ["my car is red", "the budget meeting moved to Friday"]);
      await eventually(
        () => status(live, agentId),
        (now) => now.entries === 2 && now.pending === 0,
      );
      answer = bad;
      const hybrid = await send(live, "POST", `/api/agents/${agentId}/memory`, { query: "red car" });
      expect(hybrid.status, JSON.stringify(hybrid.body)).toBe(200);
      expect(hybrid.body.results).toMatchObject([{ content: "my car is red", matchedBy: ["text"] }]);

      const vector = await send(live, "POST", `/api/agents/${agentId}/memory`, {
        query: "red car",
        mode: "vector",
      });
      expect(vector.status).toBe(502);
      expect(vector.body.error).toBe(
        `Provider openai answered an unusable embedding for the query (model text-embedding-3-small): vector: ${problem}`,
      );
    },
  );

  it("sends the provider a long entry cut between characters, never half an emoji", async () => {
    answer = "good";
    const agentId = await newAgent(live, "text-embedding-3-small");
    // text-embedding-3-small takes 8191 tokens: entries are cut at 8191 bytes, here inside the emoji.
    const content = `${"a".repeat(8190)}😀 and more`;
    await remember(live, agentId, [content]);
    await eventually(
      () => status(live, agentId),
      (now) => now.entries === 1 && now.pending === 0,
    );
    const sent = inputs.filter((text) => text.startsWith("aaaa"));
    expect(sent).toHaveLength(1);
    expect(sent[0]?.isWellFormed()).toBe(true);
    expect(sent[0]).toBe("a".repeat(8190));
  });

  it("embeds every memory of an agent, one of them more tokens of a non-Latin script than the model takes", async () => {
    answer = "good";
    const agentId = await newAgent(live, "text-embedding-3-small");
    // 10 000 characters (30 000 bytes: memory takes it) are at least 10 000 tokens to any OpenAI tokenizer.
    const long = "鱻".repeat(10_000);
    await remember(live, agentId, [long, "my car is red"]);
    // Refused, the request would be retried with its batch for good, and no memory of the agent embedded.
    const settled = await eventually(
      () => status(live, agentId),
      (now) => now.pending === 0,
      20_000,
    );
    expect(settled).toMatchObject({ entries: 2, embedded: 2, lastError: null });
    const sent = inputs.filter((text) => text.startsWith("鱻"));
    expect(sent.every((text) => fewestTokens(text) <= MAX_INPUT_TOKENS)).toBe(true);
  });
});
