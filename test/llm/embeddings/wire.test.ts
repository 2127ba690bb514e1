import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_BATCH_CHARS, planBatches } from "../../../src/llm/embeddings/batches.ts";
import { embeddingsPath, offersEmbeddings } from "../../../src/llm/embeddings/endpoint.ts";
import {
  decodeBase64Vector,
  encodeBase64Vector,
  fromEmbeddingsAnswer,
  toEmbeddingsRequest,
} from "../../../src/llm/openai/embeddings.ts";
import { cosine, hashedEmbedding } from "../../helpers/hashed-embedder.ts";

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../../src/llm/openai/__fixtures__/${name}`, import.meta.url), "utf8"));

describe("OpenAI's embeddings wire format", () => {
  it("writes the request OpenAI documents: model, inputs, encoding, dimensions only when asked", () => {
    const request = fixture("embeddings-request.json");
    expect(toEmbeddingsRequest(request.model, request.input, "base64", 8)).toEqual(request);
    expect(toEmbeddingsRequest("text-embedding-3-small", ["x"], "float")).toEqual({
      model: "text-embedding-3-small",
      input: ["x"],
      encoding_format: "float",
    });
  });

  it("reads a float answer and a base64 answer of the same vectors alike", () => {
    const floats = fromEmbeddingsAnswer(fixture("embeddings-float.json"), 2);
    const packed = fromEmbeddingsAnswer(fixture("embeddings-base64.json"), 2);
    expect(floats.inputTokens).toBe(9);
    expect(floats.model).toBe("text-embedding-3-small");
    expect(floats.vectors.map((vector) => vector.length)).toEqual([8, 8]);
    expect(packed.vectors).toEqual(floats.vectors);
    expect(packed.vectors[0]).toBeInstanceOf(Float32Array);
    // The fixture's vectors are unit length, as OpenAI's are.
    for (const vector of packed.vectors) expect(cosine(vector, vector)).toBeCloseTo(1, 5);
  });

  it("places items by their index, whatever order they come in", () => {
    const answer = fixture("embeddings-float.json");
    const reversed = { ...answer, data: [...answer.data].reverse() };
    expect(fromEmbeddingsAnswer(reversed, 2).vectors).toEqual(fromEmbeddingsAnswer(answer, 2).vectors);
  });

  it("refuses an answer that misses, repeats or garbles an input, or is not one", () => {
    const answer = fixture("embeddings-float.json");
    const [first, second] = answer.data;
    expect(() => fromEmbeddingsAnswer(answer, 3)).toThrow("2 embeddings for 3 inputs");
    expect(() => fromEmbeddingsAnswer({ ...answer, data: [first, first] }, 2)).toThrow(
      "two embeddings for input 0",
    );
    expect(() => fromEmbeddingsAnswer({ ...answer, data: [first, { ...second, index: 7 }] }, 2)).toThrow(
      "index 7",
    );
    expect(() =>
      fromEmbeddingsAnswer({ ...answer, data: [first, { ...second, embedding: ["x"] }] }, 2),
    ).toThrow("neither a list of numbers nor base64");
    expect(() =>
      fromEmbeddingsAnswer({ ...answer, data: [first, { ...second, embedding: "AAA" }] }, 2),
    ).toThrow("not float32s");
    expect(() => fromEmbeddingsAnswer({ error: { message: "no" } }, 1)).toThrow("no data list");
    expect(() => fromEmbeddingsAnswer(null, 1)).toThrow("no data list");
  });

  it("counts no tokens when a compatible server sends no usage", () => {
    const { usage: _usage, ...answer } = fixture("embeddings-float.json");
    expect(fromEmbeddingsAnswer(answer, 2).inputTokens).toBe(0);
  });

  it("round-trips any float32 vector through base64 (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.float({ noNaN: true }), { maxLength: 64 }), (values) => {
        const vector = Float32Array.from(values);
        expect(decodeBase64Vector(encodeBase64Vector(vector))).toEqual(vector);
      }),
    );
  });
});

describe("planBatches", () => {
  it("keeps the order and caps each batch by count", () => {
    const texts = Array.from({ length: 7 }, (_, index) => `text ${index}`);
    const batches = planBatches(texts, 3);
    expect(batches.map((batch) => [batch.start, batch.texts.length])).toEqual([
      [0, 3],
      [3, 3],
      [6, 1],
    ]);
    expect(batches.flatMap((batch) => batch.texts)).toEqual(texts);
  });

  it("caps each batch by characters; a text longer than the cap goes alone", () => {
    const batches = planBatches(["aaaa", "bbbb", "cccccccccc", "dd", "ee"], 100, 8);
    expect(batches.map((batch) => batch.texts)).toEqual([["aaaa", "bbbb"], ["cccccccccc"], ["dd", "ee"]]);
    expect(MAX_BATCH_CHARS).toBeLessThanOrEqual(400_000);
  });

  it("covers every text once, in order, within both caps (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ minLength: 1, maxLength: 50 }), { maxLength: 200 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 200 }),
        (texts, maxCount, maxChars) => {
          const batches = planBatches(texts, maxCount, maxChars);
          expect(batches.flatMap((batch) => batch.texts)).toEqual(texts);
          let at = 0;
          for (const batch of batches) {
            expect(batch.start).toBe(at);
            at += batch.texts.length;
            expect(batch.texts.length).toBeGreaterThan(0);
            expect(batch.texts.length).toBeLessThanOrEqual(maxCount);
            const chars = batch.texts.reduce((sum, text) => sum + text.length, 0);
            if (batch.texts.length > 1) expect(chars).toBeLessThanOrEqual(maxChars);
          }
        },
      ),
    );
  });
});

describe("the embeddings endpoint", () => {
  it("is <base URL>/embeddings, and Gemini's OpenAI-compatible path under Google's host", () => {
    expect(embeddingsPath({ driver: "openai" }, "https://api.openai.com/v1")).toBe("/embeddings");
    expect(embeddingsPath({ driver: "openai_compat" }, "http://127.0.0.1:11434/v1")).toBe("/embeddings");
    const google = { driver: "google" } as const;
    expect(embeddingsPath(google, "https://generativelanguage.googleapis.com")).toBe(
      "/v1beta/openai/embeddings",
    );
    expect(embeddingsPath(google, "https://proxy.example/v1beta")).toBe("/openai/embeddings");
    expect(embeddingsPath(google, "https://proxy.example/v1beta/openai/")).toBe("/embeddings");
    expect(offersEmbeddings({ driver: "anthropic" })).toBe(false);
    expect(offersEmbeddings(google)).toBe(true);
  });
});

describe("the deterministic test embedder", () => {
  it("is deterministic, unit length, and puts texts sharing words closer than unrelated ones", () => {
    const a = hashedEmbedding("The quarterly budget meeting moved to Friday");
    expect(hashedEmbedding("The quarterly budget meeting moved to Friday")).toEqual(a);
    expect(cosine(a, a)).toBeCloseTo(1, 5);
    const paraphrase = hashedEmbedding("Friday is now when the budget meetings for the quarter happen");
    const unrelated = hashedEmbedding("My cat sleeps on the warm laptop keyboard");
    expect(cosine(a, paraphrase)).toBeGreaterThan(cosine(a, unrelated) + 0.2);
    expect(hashedEmbedding("...", 16)).toHaveLength(16);
  });
});
