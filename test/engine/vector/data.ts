/** Seeded test vectors and the exact (float) nearest neighbours they are checked against. */

export function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

export function gaussian(rand: () => number): number {
  return Math.sqrt(-2 * Math.log(rand() + 1e-12)) * Math.cos(2 * Math.PI * rand());
}

/** `n` vectors of `dims` dimensions, each value standard normal: directions uniform on the sphere. */
export function uniformVectors(n: number, dims: number, seed: number): Float32Array[] {
  const rand = random(seed);
  return Array.from({ length: n }, () => Float32Array.from({ length: dims }, () => gaussian(rand)));
}

/**
 * Vectors around `clusters` random centres (cosine to their centre about 0.75), as embeddings of
 * related texts sit near each other: the shape real data has, unlike uniform directions.
 */
export function clusteredVectors(n: number, dims: number, clusters: number, seed: number): Float32Array[] {
  const rand = random(seed);
  const centres = uniformVectors(clusters, dims, seed + 1).map(unit);
  const noise = 0.9 / Math.sqrt(dims);
  return Array.from({ length: n }, () => {
    const centre = centres[Math.floor(rand() * clusters)];
    return Float32Array.from(centre, (x) => x + noise * gaussian(rand));
  });
}

/**
 * Sparse vectors as a hashed bag of words makes them: each the sum of 4 to 8 words of a 1 500-word
 * vocabulary, a word being ±1 in one dimension (the vocabulary's `vocabularySeed` fixes which). All but a
 * few values are zero, the case a sign code alone reads badly (rotation.ts).
 */
export function sparseVectors(n: number, dims: number, seed: number, vocabularySeed = 1): Float32Array[] {
  const words = random(vocabularySeed);
  const vocabulary = Array.from({ length: 1500 }, () => ({
    dim: Math.floor(words() * dims),
    sign: words() < 0.5 ? -1 : 1,
  }));
  const rand = random(seed);
  return Array.from({ length: n }, () => {
    const vector = new Float32Array(dims);
    const count = 4 + Math.floor(rand() * 5);
    for (let k = 0; k < count; k++) {
      const word = vocabulary[Math.floor(rand() * vocabulary.length)];
      vector[word.dim] += word.sign;
    }
    // Words that cancel out leave nothing: such a vector has no direction, so give it one.
    if (vector.every((x) => x === 0)) vector[0] = 1;
    return vector;
  });
}

export function unit(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  return Float32Array.from(vector, (x) => x / norm);
}

export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
}

/** The ids of the `k` vectors most similar to `query` by float cosine (brute force). */
export function exactTop(vectors: Float32Array[], ids: string[], query: Float32Array, k: number): string[] {
  return vectors
    .map((vector, i) => ({ id: ids[i], score: cosine(vector, query) }))
    .sort((a, b) => b.score - a.score)
    .slice(0, k)
    .map((hit) => hit.id);
}

/** Share of `exact` found in `found`. */
export function recall(found: string[], exact: string[]): number {
  const got = new Set(found);
  return exact.filter((id) => got.has(id)).length / exact.length;
}

/**
 * Share of `found` (k ids) that belong in the exact top k up to `tolerance`: a hit counts when its float
 * cosine is at least the k-th best's minus `tolerance`. Stored int8 vectors reorder near-ties (uniform
 * random vectors are full of them), which is no miss.
 */
export function nearRecall(
  found: string[],
  vectors: Float32Array[],
  ids: string[],
  query: Float32Array,
  k: number,
  tolerance: number,
): number {
  const scores = vectors.map((vector) => cosine(vector, query));
  const kth = [...scores].sort((a, b) => b - a)[k - 1];
  const index = new Map(ids.map((id, i) => [id, i]));
  return found.filter((id) => scores[index.get(id) ?? -1] >= kth - tolerance).length / k;
}

/** The mean nearRecall of `search`'s answers to `queries` (ids name `vectors` by position in `ids`). */
export async function meanNearRecall(
  search: (query: Float32Array) => Array<{ id: string }> | Promise<Array<{ id: string }>>,
  data: { vectors: Float32Array[]; ids: string[]; queries: Float32Array[] },
  k: number,
  tolerance = 0.01,
): Promise<number> {
  let total = 0;
  for (const query of data.queries) {
    const hits = await search(query);
    total += nearRecall(
      hits.map((hit) => hit.id),
      data.vectors,
      data.ids,
      query,
      k,
      tolerance,
    );
  }
  return total / data.queries.length;
}
