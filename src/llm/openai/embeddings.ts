/**
 * OpenAI's `/embeddings` wire format, as pure converters: the request body for a batch of texts, and
 * the answer read back into vectors in input order, floats or base64 alike (base64 is little-endian
 * float32, a third of the bytes of the JSON numbers).
 */

export type EmbeddingEncoding = "float" | "base64";

/** OpenAI's request body for one batch. */
export interface EmbeddingsRequestBody {
  model: string;
  input: string[];
  encoding_format: EmbeddingEncoding;
  dimensions?: number;
}

export function toEmbeddingsRequest(
  model: string,
  input: string[],
  encoding: EmbeddingEncoding,
  dimensions?: number,
): EmbeddingsRequestBody {
  return { model, input, encoding_format: encoding, ...(dimensions ? { dimensions } : {}) };
}

/** One batch's answer in our terms: a vector per input, in the inputs' order, and the tokens counted. */
export interface EmbeddingsAnswer {
  vectors: Float32Array[];
  inputTokens: number;
  /** The model as the provider named it. */
  model: string | undefined;
}

/**
 * The provider's answer for `count` inputs. Items are placed by their `index` (providers need not keep
 * the order); an answer that misses an input, repeats one, or holds anything but numbers or base64 is
 * refused with what is wrong (the caller words it for the provider).
 */
export function fromEmbeddingsAnswer(answer: unknown, count: number): EmbeddingsAnswer {
  const body = answer as { data?: unknown; usage?: { prompt_tokens?: unknown }; model?: unknown } | null;
  if (!body || !Array.isArray(body.data)) throw new Error("the answer has no data list");
  if (body.data.length !== count) {
    throw new Error(`the answer has ${body.data.length} embeddings for ${count} inputs`);
  }
  const vectors = new Array<Float32Array | undefined>(count);
  body.data.forEach((item: { index?: unknown; embedding?: unknown } | null, position) => {
    const index = item?.index ?? position;
    if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index >= count) {
      throw new Error(`embedding ${position} has the index ${String(index)} (of ${count} inputs)`);
    }
    if (vectors[index]) throw new Error(`the answer has two embeddings for input ${index}`);
    vectors[index] = vectorOf(item?.embedding, index);
  });
  const tokens = body.usage?.prompt_tokens;
  return {
    vectors: vectors as Float32Array[],
    inputTokens: typeof tokens === "number" && Number.isFinite(tokens) && tokens > 0 ? tokens : 0,
    model: typeof body.model === "string" ? body.model : undefined,
  };
}

function vectorOf(embedding: unknown, index: number): Float32Array {
  if (typeof embedding === "string") return decodeBase64Vector(embedding);
  if (Array.isArray(embedding) && embedding.every((value) => typeof value === "number")) {
    return Float32Array.from(embedding as number[]);
  }
  throw new Error(`embedding ${index} is neither a list of numbers nor base64`);
}

const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Base64 of little-endian float32s (OpenAI's `encoding_format: "base64"`) as a vector. */
export function decodeBase64Vector(text: string): Float32Array {
  const bytes = Buffer.from(text, "base64");
  if (bytes.length % 4 !== 0) throw new Error(`a base64 embedding of ${bytes.length} bytes is not float32s`);
  const vector = new Float32Array(bytes.length / 4);
  if (littleEndian) new Uint8Array(vector.buffer).set(bytes);
  else {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < vector.length; i++) vector[i] = view.getFloat32(i * 4, true);
  }
  return vector;
}

/** A vector as OpenAI's base64 (little-endian float32s). */
export function encodeBase64Vector(vector: ArrayLike<number>): string {
  const bytes = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i] ?? 0, i * 4);
  return bytes.toString("base64");
}
