import { describe, expect, it } from "vitest";
import { effectiveEmbeddingModel } from "../../../src/llm/embeddings/choice.ts";

describe("an agent's effective embedding model", () => {
  it("is its own, else AGENTOS_EMBEDDING_MODEL, else none", () => {
    const env = { AGENTOS_EMBEDDING_MODEL: "nomic" };
    expect(effectiveEmbeddingModel({ embeddingModel: "text-embedding-3-small" }, env)).toBe(
      "text-embedding-3-small",
    );
    expect(effectiveEmbeddingModel({ embeddingModel: "ollama/bge-m3" }, {})).toBe("ollama/bge-m3");
    expect(effectiveEmbeddingModel({}, env)).toBe("nomic");
    expect(effectiveEmbeddingModel({ embeddingModel: null }, env)).toBe("nomic");
    expect(effectiveEmbeddingModel({}, {})).toBeNull();
    expect(effectiveEmbeddingModel({ embeddingModel: null }, {})).toBeNull();
  });

  it("reads a blank value as unset, as the configuration does", () => {
    expect(effectiveEmbeddingModel({}, { AGENTOS_EMBEDDING_MODEL: "  " })).toBeNull();
    expect(effectiveEmbeddingModel({ embeddingModel: " " }, { AGENTOS_EMBEDDING_MODEL: " nomic " })).toBe(
      "nomic",
    );
  });
});
