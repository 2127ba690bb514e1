import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { VectorIndex } from "../../../src/engine/vector/types.ts";
import { AppError } from "../../../src/shared/errors.ts";
import {
  clusteredVectors,
  cosine,
  exactTop,
  meanNearRecall,
  nearRecall,
  recall,
  sparseVectors,
  uniformVectors,
} from "./data.ts";

const INDEX = "memory";
const M8 = "model-8";

/** The VectorIndex contract: both backends must pass exactly these tests. */
export function vectorIndexContract(
  name: string,
  makeIndex: () => VectorIndex | Promise<VectorIndex>,
  runs: number,
) {
  describe(`VectorIndex contract (${name})`, () => {
    let index: VectorIndex;
    let scope: string;
    const v = (...values: number[]) => Float32Array.from(values);
    const ids = async (vector: Float32Array, limit = 10, model = M8, target = scope) =>
      (await index.query(INDEX, target, vector, { limit, model })).map((hit) => hit.id);
    const putAll = async (target: string, model: string, vectors: Float32Array[], prefix = "e") => {
      for (let at = 0; at < vectors.length; at += 500) {
        const batch = vectors.slice(at, at + 500).map((vector, i) => ({ id: `${prefix}${at + i}`, vector }));
        await index.putMany(INDEX, target, model, batch);
      }
    };
    const refused = async (work: () => unknown, message: RegExp) => {
      const error = await Promise.resolve()
        .then(work)
        .then(
          () => null,
          (caught: unknown) => caught,
        );
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe("validation");
      expect((error as AppError).message).toMatch(message);
    };

    beforeAll(async () => {
      index = await makeIndex();
    });
    afterAll(async () => {
      await index.close();
    });
    beforeEach(() => {
      scope = `agent-${randomUUID()}`;
    });

    it("finds what brute-force float cosine finds, up to int8 precision (recall@10 ≥ 0.95 on uniform random vectors)", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 2 ** 31 }),
          fc.integer({ min: 11, max: 400 }),
          fc.constantFrom(8, 33, 64, 100),
          async (seed, n, dims) => {
            const target = `p-${randomUUID()}`;
            const model = `m${dims}`;
            const vectors = uniformVectors(n, dims, seed);
            const names = vectors.map((_, i) => `e${i}`);
            await putAll(target, model, vectors);
            let total = 0;
            const queries = uniformVectors(5, dims, seed + 7);
            for (const query of queries) {
              const hits = await index.query(INDEX, target, query, { limit: 10, model });
              expect(hits).toHaveLength(10);
              for (const hit of hits)
                expect(hit.score).toBeCloseTo(cosine(query, vectors[Number(hit.id.slice(1))]), 1);
              // int8 vectors may swap near-ties at the cut-off (within 0.01 of the 10th best's cosine).
              total += nearRecall(
                hits.map((hit) => hit.id),
                vectors,
                names,
                query,
                10,
                0.01,
              );
            }
            expect(total / queries.length).toBeGreaterThanOrEqual(0.95);
            await index.deleteScope(INDEX, target);
          },
        ),
        { numRuns: runs },
      );
    });

    it("keeps recall through every pass on a scope larger than its shortlists", async () => {
      const dims = 96;
      const vectors = clusteredVectors(4000, dims, 80, 11);
      const names = vectors.map((_, i) => `e${i}`);
      await putAll(scope, "m96", vectors);
      let total = 0;
      const queries = clusteredVectors(20, dims, 80, 11).map((query, i) =>
        query.map((x, j) => x + 0.01 * ((i + j) % 3)),
      );
      for (const query of queries) {
        const hits = await index.query(INDEX, scope, query, { limit: 10, model: "m96", rescore: 50 });
        total += recall(
          hits.map((hit) => hit.id),
          exactTop(vectors, names, query, 10),
        );
      }
      expect(total / queries.length).toBeGreaterThanOrEqual(0.95);
      expect(await index.count(INDEX, scope, "m96")).toBe(4000);
    });

    it("finds sparse vectors' neighbours through the shortlists too (their zeros are no sign)", async () => {
      const dims = 384;
      const vectors = sparseVectors(3000, dims, 31);
      const names = vectors.map((_, i) => `e${i}`);
      await putAll(scope, "s384", vectors);
      const queries = sparseVectors(20, dims, 32);
      // Sparse vectors tie often: a hit as good as the 10th best counts.
      const search = (query: Float32Array) => index.query(INDEX, scope, query, { limit: 10, model: "s384" });
      expect(await meanNearRecall(search, { vectors, ids: names, queries }, 10)).toBeGreaterThanOrEqual(0.95);
    });

    it("scores cosine in [-1, 1], best first", async () => {
      await index.putMany(INDEX, scope, M8, [
        { id: "same", vector: v(1, 2, 3, 4, 5, 6, 7, 8) },
        { id: "scaled", vector: v(2, 4, 6, 8, 10, 12, 14, 20) },
        { id: "opposite", vector: v(-1, -2, -3, -4, -5, -6, -7, -8) },
        { id: "orthogonal", vector: v(8, -7, 6, -5, 4, -3, 2, -1.25) },
      ]);
      const hits = await index.query(INDEX, scope, v(1, 2, 3, 4, 5, 6, 7, 8), { limit: 10, model: M8 });
      expect(hits.map((hit) => hit.id)).toEqual(["same", "scaled", "orthogonal", "opposite"]);
      expect(hits[0].score).toBeCloseTo(1, 2);
      expect(hits[2].score).toBeCloseTo(
        cosine(v(1, 2, 3, 4, 5, 6, 7, 8), v(8, -7, 6, -5, 4, -3, 2, -1.25)),
        2,
      );
      expect(hits[3].score).toBeCloseTo(-1, 2);
      for (const hit of hits) expect(Math.abs(hit.score)).toBeLessThanOrEqual(1);
      expect(await ids(v(1, 2, 3, 4, 5, 6, 7, 8), 2)).toEqual(["same", "scaled"]);
    });

    it("keeps models apart: a query sees its model's vectors only", async () => {
      await index.put(INDEX, scope, "a", v(1, 0, 0, 0, 0, 0, 0, 0), M8);
      await index.put(
        INDEX,
        scope,
        "a",
        Float32Array.from({ length: 16 }, (_, i) => (i === 3 ? 1 : 0)),
        "model-16",
      );
      await index.put(
        INDEX,
        scope,
        "b",
        Float32Array.from({ length: 16 }, (_, i) => i + 1),
        "model-16",
      );
      expect(await ids(v(1, 0, 0, 0, 0, 0, 0, 0))).toEqual(["a"]);
      expect(await index.count(INDEX, scope, M8)).toBe(1);
      expect(await index.count(INDEX, scope, "model-16")).toBe(2);
      expect(await index.count(INDEX, scope)).toBe(3);
      expect(
        await index.query(INDEX, scope, v(1, 0, 0, 0, 0, 0, 0, 0), { limit: 5, model: "unknown" }),
      ).toEqual([]);
      expect(await index.missing(INDEX, scope, M8, ["a", "b", "c"])).toEqual(["b", "c"]);
      expect(await index.missing(INDEX, scope, "model-16", ["c", "b", "a"])).toEqual(["c"]);
      expect(await index.missing(INDEX, scope, "unknown", ["a"])).toEqual(["a"]);
      expect(await index.dimensions(INDEX, "model-16")).toBe(16);
      expect(await index.dimensions(INDEX, "never-used")).toBeNull();
    });

    it("keeps scopes apart", async () => {
      const other = `agent-${randomUUID()}`;
      await index.put(INDEX, scope, "mine", v(1, 1, 1, 1, 1, 1, 1, 1), M8);
      await index.put(INDEX, other, "theirs", v(1, 1, 1, 1, 1, 1, 1, 1), M8);
      await index.put("other-index", scope, "elsewhere", v(1, 1, 1, 1, 1, 1, 1, 1), M8);
      expect(await ids(v(1, 1, 1, 1, 1, 1, 1, 1))).toEqual(["mine"]);
      expect(await ids(v(1, 1, 1, 1, 1, 1, 1, 1), 10, M8, other)).toEqual(["theirs"]);
      expect(await index.deleteScope(INDEX, other)).toBe(1);
      expect(await ids(v(1, 1, 1, 1, 1, 1, 1, 1))).toEqual(["mine"]);
      expect(await index.count("other-index", scope, M8)).toBe(1);
    });

    it("deletes an id (every model) and a whole scope", async () => {
      await index.putMany(INDEX, scope, M8, [
        { id: "a", vector: v(1, 0, 0, 0, 0, 0, 0, 1) },
        { id: "b", vector: v(0, 1, 0, 0, 0, 0, 0, 1) },
        { id: "c", vector: v(0, 0, 1, 0, 0, 0, 0, 1) },
      ]);
      await index.put(
        INDEX,
        scope,
        "a",
        Float32Array.from({ length: 16 }, () => 1),
        "model-16",
      );
      expect(await index.delete(INDEX, scope, "a")).toBe(true);
      expect(await index.delete(INDEX, scope, "a")).toBe(false);
      expect(await index.delete(INDEX, `never-${randomUUID()}`, "a")).toBe(false);
      expect(await ids(v(1, 0, 0, 0, 0, 0, 0, 1))).not.toContain("a");
      expect(await index.count(INDEX, scope, "model-16")).toBe(0);
      expect(await index.count(INDEX, scope)).toBe(2);
      expect(await index.deleteScope(INDEX, scope)).toBe(2);
      expect(await index.deleteScope(INDEX, scope)).toBe(0);
      expect(await ids(v(1, 0, 0, 0, 0, 0, 0, 1))).toEqual([]);
      expect(await index.count(INDEX, scope, M8)).toBe(0);
      await index.put(INDEX, scope, "b", v(0, 1, 0, 0, 0, 0, 0, 1), M8);
      expect(await ids(v(1, 0, 0, 0, 0, 0, 0, 1))).toEqual(["b"]);
    });

    it("deletes a scope's vectors of every other model, keeping the model's and other scopes'", async () => {
      const other = `${scope}-other`;
      const sixteen = Float32Array.from({ length: 16 }, () => 1);
      await index.putMany(INDEX, scope, M8, [
        { id: "a", vector: v(1, 0, 0, 0, 0, 0, 0, 1) },
        { id: "b", vector: v(0, 1, 0, 0, 0, 0, 0, 1) },
      ]);
      await index.put(INDEX, scope, "a", sixteen, "model-16");
      await index.put(INDEX, other, "a", sixteen, "model-16");
      // A query first, so that a cached scope must notice the deletion.
      expect(await index.query(INDEX, scope, sixteen, { limit: 5, model: "model-16" })).toHaveLength(1);
      expect(await index.deleteOtherModels(INDEX, scope, M8)).toBe(1);
      expect(await index.deleteOtherModels(INDEX, scope, M8)).toBe(0);
      expect(await index.query(INDEX, scope, sixteen, { limit: 5, model: "model-16" })).toEqual([]);
      expect(await index.count(INDEX, scope, M8)).toBe(2);
      expect(await index.count(INDEX, other, "model-16")).toBe(1);
      // A model the index never saw keeps nothing.
      expect(await index.deleteOtherModels(INDEX, scope, `unseen-${randomUUID()}`)).toBe(2);
      expect(await index.count(INDEX, scope)).toBe(0);
      expect(await index.deleteOtherModels(INDEX, `never-${randomUUID()}`, M8)).toBe(0);
    });

    it("keeps refused ids out of missing, per model, until they are deleted", async () => {
      const other = `${scope}-other`;
      await index.put(INDEX, scope, "a", v(1, 0, 0, 0, 0, 0, 0, 1), M8);
      // A model that has no vector yet (a first batch refused) can hold refusals too.
      await index.refuse(INDEX, scope, M8, ["b", "c"]);
      await index.refuse(INDEX, scope, M8, ["b"]);
      await index.refuse(INDEX, scope, "model-new", ["c", "d"]);
      expect(await index.missing(INDEX, scope, M8, ["a", "b", "c", "d"])).toEqual(["d"]);
      expect(await index.missing(INDEX, scope, "model-new", ["a", "b", "c", "d"])).toEqual(["a", "b"]);
      expect(await index.missing(INDEX, other, M8, ["b"])).toEqual(["b"]);
      expect(await index.refused(INDEX, scope, M8)).toBe(2);
      expect(await index.refused(INDEX, scope)).toBe(4);
      expect(await index.refused(INDEX, other, M8)).toBe(0);
      // Refusals are no vectors: queries and counts do not see them.
      expect(await index.count(INDEX, scope, M8)).toBe(1);
      expect(await index.count(INDEX, scope)).toBe(1);
      expect(await ids(v(0, 1, 0, 0, 0, 0, 0, 1))).toEqual(["a"]);
      // An id deleted (its entry gone) takes its refusals of every model with it, as it takes its vectors.
      expect(await index.delete(INDEX, scope, "c")).toBe(false);
      expect(await index.missing(INDEX, scope, M8, ["b", "c"])).toEqual(["c"]);
      expect(await index.missing(INDEX, scope, "model-new", ["c", "d"])).toEqual(["c"]);
      // A re-embedding done drops the other models' refusals; a scope deleted drops them all.
      expect(await index.deleteOtherModels(INDEX, scope, M8)).toBe(0);
      expect(await index.refused(INDEX, scope)).toBe(1);
      expect(await index.deleteScope(INDEX, scope)).toBe(1);
      expect(await index.refused(INDEX, scope)).toBe(0);
      expect(await index.missing(INDEX, scope, M8, ["b"])).toEqual(["b"]);
      await refused(() => index.refuse(INDEX, scope, M8, ["ok", ""]), /id: must be/);
      expect(await index.refused(INDEX, scope)).toBe(0);
    });

    it("replaces the vector of an id put again", async () => {
      await index.put(INDEX, scope, "x", v(1, 0, 0, 0, 0, 0, 0, 0), M8);
      await index.put(INDEX, scope, "y", v(0, 1, 0, 0, 0, 0, 0, 0), M8);
      await index.put(INDEX, scope, "x", v(0, 0, 0, 0, 0, 0, 0, 1), M8);
      const [best] = await index.query(INDEX, scope, v(0, 0, 0, 0, 0, 0, 0, 1), { limit: 1, model: M8 });
      expect(best.id).toBe("x");
      expect(best.score).toBeCloseTo(1, 2);
      expect(await index.count(INDEX, scope, M8)).toBe(2);
      // In one batch, a repeated id keeps its last vector.
      await index.putMany(INDEX, scope, M8, [
        { id: "z", vector: v(1, 0, 0, 0, 0, 0, 0, 0) },
        { id: "z", vector: v(0, 0, 0, 0, 0, 0, 1, 0) },
      ]);
      expect(await ids(v(0, 0, 0, 0, 0, 0, 1, 0), 1)).toEqual(["z"]);
    });

    it("keeps vectors across a restart", async () => {
      await index.put(INDEX, scope, "kept", v(1, 2, 3, 4, 5, 6, 7, 8), M8);
      const reopened = await makeIndex();
      try {
        expect(
          (await reopened.query(INDEX, scope, v(1, 2, 3, 4, 5, 6, 7, 8), { limit: 3, model: M8 }))[0].id,
        ).toBe("kept");
        expect(await reopened.dimensions(INDEX, M8)).toBe(8);
      } finally {
        await reopened.close();
      }
    });

    it("sees another instance's writes on the same storage (cluster nodes)", async () => {
      const other = await makeIndex();
      const q = v(1, 1, 0, 0, 0, 0, 0, 0);
      try {
        await index.putMany(INDEX, scope, M8, [
          { id: "a", vector: v(1, 1, 0, 0, 0, 0, 0, 0) },
          { id: "b", vector: v(0, 0, 1, 1, 0, 0, 0, 0) },
        ]);
        expect(await other.count(INDEX, scope, M8)).toBe(2);
        await other.put(INDEX, scope, "c", v(1, 1, 0.1, 0, 0, 0, 0, 0), M8);
        expect(await ids(q)).toEqual(["a", "c", "b"]);
        await other.put(INDEX, scope, "a", v(-0.2, 0, 0, 0, 0, 0, 1, 1), M8);
        expect(await ids(q)).toEqual(["c", "b", "a"]);
        expect(await other.delete(INDEX, scope, "c")).toBe(true);
        expect(await ids(q)).toEqual(["b", "a"]);
        expect(await index.missing(INDEX, scope, M8, ["a", "c"])).toEqual(["c"]);
        await index.delete(INDEX, scope, "b");
        expect((await other.query(INDEX, scope, q, { limit: 5, model: M8 })).map((hit) => hit.id)).toEqual([
          "a",
        ]);
        expect(await other.deleteScope(INDEX, scope)).toBe(1);
        expect(await ids(q)).toEqual([]);
        await other.put(INDEX, scope, "d", q, M8);
        expect(await ids(q)).toEqual(["d"]);
      } finally {
        await other.close();
      }
    });

    it("refuses bad vectors with a clear error, storing nothing", async () => {
      await index.put(INDEX, scope, "ok", v(1, 2, 3, 4, 5, 6, 7, 8), M8);
      await refused(() => index.put(INDEX, scope, "short", v(1, 2, 3), M8), /3 dimensions.*have 8/);
      await refused(
        () => index.put(INDEX, scope, "nan", v(1, Number.NaN, 3, 4, 5, 6, 7, 8), M8),
        /not a finite/,
      );
      await refused(
        () => index.put(INDEX, scope, "inf", v(1, Number.POSITIVE_INFINITY, 3, 4, 5, 6, 7, 8), M8),
        /finite/,
      );
      await refused(() => index.put(INDEX, scope, "zero", new Float32Array(8), M8), /no direction/);
      await refused(() => index.put(INDEX, scope, "empty", new Float32Array(0), M8), /length/);
      await refused(() => index.put(INDEX, scope, "", v(1, 2, 3, 4, 5, 6, 7, 8), M8), /id/);
      await refused(
        () =>
          index.putMany(INDEX, scope, M8, [
            { id: "fine", vector: v(1, 2, 3, 4, 5, 6, 7, 8) },
            { id: "bad", vector: v(1, 2) },
          ]),
        /dimensions/,
      );
      await refused(
        () =>
          index.putMany(INDEX, scope, `fresh-${randomUUID()}`, [
            { id: "p", vector: v(1, 2, 3) },
            { id: "q", vector: v(1, 2) },
          ]),
        /dimensions/,
      );
      await refused(
        () => index.query(INDEX, scope, v(1, 2), { limit: 5, model: M8 }),
        /2 dimensions.*have 8/,
      );
      await refused(() => index.query(INDEX, scope, v(Number.NaN), { limit: 5, model: "unknown" }), /finite/);
      expect(await index.count(INDEX, scope, M8)).toBe(1);
      expect(await index.count(INDEX, scope)).toBe(1);
    });
  });
}
