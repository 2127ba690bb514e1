import { asymmetricTable, hammingCut, int8Score, takeNearest } from "./scan.ts";
import {
  advance,
  assign,
  below,
  byFours,
  type Code,
  element,
  fours,
  op,
  type,
  wasmModule,
  whileTrue,
} from "./wasm.ts";

/**
 * A query's passes in WebAssembly: the two over a scope's sign codes (Hamming, asymmetric) and the
 * int8 rescoring. `i64.popcnt` is one CPU instruction where JavaScript needs a dozen bit operations
 * per 32-bit word, and JavaScript's typed arrays pay a bounds check on every lookup. Each kernel
 * computes exactly what its JavaScript reference in scan.ts does (the tests compare them bit for bit).
 * At 100 000 × 1536 dims, minimum over 300 queries: Hamming with the cut-off's selection 2.5 → 2.05 ms
 * (the histogram was a JavaScript pass), asymmetric table and scores of 1 600 codes 0.75 → 0.57 ms
 * (p50 1.2 → 0.7 ms; reading the 1 600 codes from memory is much of it), 200 int8 dots 0.45 → 0.30 ms.
 * 128-bit SIMD was measured and left out: V8 lowers `i8x16.popcnt` to a byte-shuffle sequence no faster
 * than scalar `i64.popcnt` here, and the scan is bound by reading the codes from memory (over codes in
 * cache it takes half the time); unrolling it further did not help either.
 */

/**
 * ham(codes, count, words64, query, out, histogram): the Hamming distance of each of `count` codes
 * (`words64` 64-bit words each, packed from `codes`) to `query`, as u16 at `out`; and counts each
 * distance in the u32 `histogram` (zeroed by the caller), from which the shortlist's cut-off is read
 * without another pass. Four words a turn, then the rest one at a time.
 */
function hammingKernel() {
  const [CODES, COUNT, WORDS64, QUERY, OUT, HISTOGRAM] = [0, 1, 2, 3, 4, 5];
  const [P, Q, QUADS_END, QUERY_END, OUT_END, D, AT] = [6, 7, 8, 9, 10, 11, 12];
  const word = (offset: number): Code => [
    op.get(P),
    op.i64Load(offset),
    op.get(Q),
    op.i64Load(offset),
    op.i64Xor,
    op.i64Popcnt,
    op.i64Add,
  ];
  const distance: Code = [
    assign(D, op.i64Zero),
    assign(Q, op.get(QUERY)),
    whileTrue(below(Q, QUADS_END), [
      op.get(D),
      [word(0), word(8), word(16), word(24)],
      op.set(D),
      advance(P, 32),
      advance(Q, 32),
    ]),
    whileTrue(below(Q, QUERY_END), [op.get(D), word(0), op.set(D), advance(P, 8), advance(Q, 8)]),
  ];
  const record: Code = [
    [op.get(OUT), op.get(D), op.i32WrapI64, op.i32Store16()],
    assign(AT, element(HISTOGRAM, [op.get(D), op.i32WrapI64], 2)),
    [op.get(AT), op.get(AT), op.i32Load(), op.i32(1), op.i32Add, op.i32Store()],
  ];
  return {
    name: "ham",
    params: 6,
    locals: [...[P, Q, QUADS_END, QUERY_END, OUT_END].map(() => type.i32), type.i64, type.i32],
    body: [
      assign(OUT_END, element(OUT, op.get(COUNT), 1)),
      assign(QUERY_END, element(QUERY, op.get(WORDS64), 3)),
      assign(QUADS_END, element(QUERY, fours(WORDS64), 3)),
      assign(P, op.get(CODES)),
      whileTrue(below(OUT, OUT_END), [distance, record, advance(OUT, 2)]),
    ],
  };
}

/**
 * asym(codes, bytes, table, slots, count, out): for each of `count` i32 slots, the sum over its code's
 * bytes j of the f32 table[j × 256 + byte], accumulated in f64 in byte order and stored as f32 at `out`:
 * scan.ts's asymmetricScores. Four slots a turn with four independent sums (each still in byte order,
 * so the same result) keep the CPU busy while one sum waits on its previous addition.
 */
function asymmetricKernel() {
  const [CODES, BYTES, TABLE, SLOTS, COUNT, OUT] = [0, 1, 2, 3, 4, 5];
  const AT = [6, 7, 8, 9];
  const SUM = [10, 11, 12, 13];
  const [T, TABLE_END, GROUPS_END, SLOTS_END] = [14, 15, 16, 17];
  const start = (k: number): Code => [
    assign(AT[k], [op.get(CODES), op.get(SLOTS), op.i32Load(4 * k), op.get(BYTES), op.i32Mul, op.i32Add]),
    assign(SUM[k], op.f64Zero),
  ];
  const lookup = (k: number): Code => [
    op.get(SUM[k]),
    element(T, [op.get(AT[k]), op.i32Load8U()], 2),
    op.f32Load(),
    [op.f64PromoteF32, op.f64Add, op.set(SUM[k])],
    advance(AT[k], 1),
  ];
  const store = (k: number): Code => [op.get(OUT), op.get(SUM[k]), op.f32DemoteF64, op.f32Store(4 * k)];
  /** `lanes` slots from SLOTS on, scored together. */
  const slots = (lanes: number[]): Code => [
    lanes.map(start),
    assign(T, op.get(TABLE)),
    whileTrue(below(T, TABLE_END), [lanes.map(lookup), advance(T, 1024)]),
    lanes.map(store),
    advance(OUT, 4 * lanes.length),
    advance(SLOTS, 4 * lanes.length),
  ];
  return {
    name: "asym",
    params: 6,
    locals: [
      ...AT.map(() => type.i32),
      ...SUM.map(() => type.f64),
      ...[T, TABLE_END, GROUPS_END, SLOTS_END].map(() => type.i32),
    ],
    body: [
      assign(TABLE_END, element(TABLE, op.get(BYTES), 10)),
      assign(SLOTS_END, element(SLOTS, op.get(COUNT), 2)),
      assign(GROUPS_END, element(SLOTS, fours(COUNT), 2)),
      byFours(SLOTS, GROUPS_END, SLOTS_END, slots),
    ],
  };
}

/**
 * dots(unit, rows, stride, count, dims, out): the dot product of the f32 `unit` with each of `count` int8
 * vectors (`stride` bytes apart from `rows`), summed in f64 in dimension order and stored as f64 at
 * `out`: the dot of scan.ts's int8Cosine. Four vectors a turn with four independent sums, as in asym.
 */
function dotKernel() {
  const [UNIT, ROWS, STRIDE, COUNT, DIMS, OUT] = [0, 1, 2, 3, 4, 5];
  const AT = [6, 7, 8, 9];
  const DOT = [10, 11, 12, 13];
  const [U, UNIT_END, GROUPS_END, OUT_END, X] = [14, 15, 16, 17, 18];
  const start = (k: number): Code => [
    assign(AT[k], [op.get(ROWS), op.get(STRIDE), op.i32(k), op.i32Mul, op.i32Add]),
    assign(DOT[k], op.f64Zero),
  ];
  const term = (k: number): Code => [
    [op.get(DOT[k]), op.get(X), op.get(AT[k]), op.i32Load8S(), op.f64ConvertI32S, op.f64Mul],
    [op.f64Add, op.set(DOT[k])],
    advance(AT[k], 1),
  ];
  const store = (k: number): Code => [op.get(OUT), op.get(DOT[k]), op.f64Store(8 * k)];
  /** `lanes` vectors from ROWS on, scored together. */
  const vectors = (lanes: number[]): Code => [
    lanes.map(start),
    assign(U, op.get(UNIT)),
    whileTrue(below(U, UNIT_END), [
      assign(X, [op.get(U), op.f32Load(), op.f64PromoteF32]),
      lanes.map(term),
      advance(U, 4),
    ]),
    lanes.map(store),
    advance(OUT, 8 * lanes.length),
    assign(ROWS, [op.get(ROWS), op.get(STRIDE), op.i32(lanes.length), op.i32Mul, op.i32Add]),
  ];
  return {
    name: "dots",
    params: 6,
    locals: [
      ...AT.map(() => type.i32),
      ...DOT.map(() => type.f64),
      ...[U, UNIT_END, GROUPS_END, OUT_END].map(() => type.i32),
      type.f64,
    ],
    body: [
      assign(UNIT_END, element(UNIT, op.get(DIMS), 2)),
      assign(OUT_END, element(OUT, op.get(COUNT), 3)),
      assign(GROUPS_END, element(OUT, fours(COUNT), 3)),
      byFours(OUT, GROUPS_END, OUT_END, vectors),
    ],
  };
}

/** The few WebAssembly APIs used (the project's TypeScript libs do not declare them). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
const wasm = (
  globalThis as unknown as {
    WebAssembly: {
      Module: new (bytes: Uint8Array) => object;
      Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
      Memory: new (descriptor: { initial: number }) => WasmMemory;
    };
  }
).WebAssembly;

const module = new wasm.Module(wasmModule([hammingKernel(), asymmetricKernel(), dotKernel()]));
const PAGE = 65_536;
const align16 = (at: number) => Math.ceil(at / 16) * 16;

type Kernel = (...args: number[]) => void;

/** The kernels over a memory of their own (each instance imports the memory it is given). */
function instantiate(memory: WasmMemory): Record<"ham" | "asym" | "dots", Kernel> {
  const { exports } = new wasm.Instance(module, { env: { memory } });
  return { ham: exports.ham as Kernel, asym: exports.asym as Kernel, dots: exports.dots as Kernel };
}

/** Grows `memory` to at least `bytes`. */
function ensureBytes(memory: WasmMemory, bytes: number): void {
  const have = memory.buffer.byteLength;
  if (bytes > have) memory.grow(Math.ceil((bytes - have) / PAGE));
}

/**
 * Packed codes in a WebAssembly memory of their own, with room after them for a query's scratch:
 * query code, distances and histogram (reserved with the codes), then the asymmetric pass's table,
 * slots and scores (grown on a scope's first query large enough to need them). `words` must be even
 * (the scan reads 64 bits at a time; see codeWords).
 */
export class CodeMemory {
  private readonly memory: WasmMemory;
  private readonly ham: Kernel;
  private readonly asym: Kernel;
  codes: Uint32Array;
  private readonly words: number;
  private capacity = 0;

  constructor(words: number, capacity: number) {
    this.words = words;
    this.memory = new wasm.Memory({ initial: 1 });
    ({ ham: this.ham, asym: this.asym } = instantiate(this.memory));
    this.codes = new Uint32Array(0);
    this.reserve(capacity);
  }

  /** Room for `capacity` codes and the Hamming pass's scratch; old views are replaced. */
  reserve(capacity: number): void {
    this.capacity = capacity;
    this.ensure(this.layout(0).table);
  }

  get bytes(): number {
    return this.memory.buffer.byteLength;
  }

  /**
   * Hamming distance of each of the first `count` codes to `query`, and how many codes are at each
   * distance (0 … 32 × words). Both views are valid until the next call.
   */
  distances(count: number, query: Uint32Array): { distances: Uint16Array; histogram: Uint32Array } {
    const at = this.layout(0);
    const { buffer } = this.memory;
    new Uint32Array(buffer, at.query, this.words).set(query);
    const histogram = new Uint32Array(buffer, at.histogram, this.words * 32 + 1);
    histogram.fill(0);
    this.ham(0, count, this.words / 2, at.query, at.distances, at.histogram);
    return { distances: new Uint16Array(buffer, at.distances, count), histogram };
  }

  /** The `take` codes nearest to `query` among the first `count` (those tied at the cut-off: lowest slots first). */
  nearest(count: number, query: Uint32Array, take: number): Int32Array {
    const { distances, histogram } = this.distances(count, query);
    return takeNearest(distances, hammingCut(histogram, take), take);
  }

  /** scan.ts's asymmetricScores of `slots` for the unit query (a new array). */
  asymmetricScores(unit: Float32Array, slots: Int32Array): Float32Array {
    const at = this.layout(slots.length);
    this.ensure(at.end);
    const { buffer } = this.memory;
    const bytes = this.words * 4;
    asymmetricTable(unit, bytes, new Float32Array(buffer, at.table, bytes * 256));
    new Int32Array(buffer, at.slots, slots.length).set(slots);
    this.asym(0, bytes, at.table, at.slots, slots.length, at.scores);
    return new Float32Array(buffer.slice(at.scores, at.scores + slots.length * 4));
  }

  /** Where each part of the scratch sits, for an asymmetric pass over `slots` slots. */
  private layout(slots: number) {
    const query = align16(this.capacity * this.words * 4);
    const distances = align16(query + this.words * 4);
    const histogram = align16(distances + this.capacity * 2);
    const table = align16(histogram + (this.words * 32 + 1) * 4);
    const slotsAt = table + this.words * 4 * 256 * 4;
    const scores = slotsAt + slots * 4;
    return { query, distances, histogram, table, slots: slotsAt, scores, end: scores + slots * 4 };
  }

  /** Grows the memory to at least `bytes` (growing replaces the buffer: the codes view is made again). */
  private ensure(bytes: number): void {
    ensureBytes(this.memory, bytes);
    if (this.codes.buffer !== this.memory.buffer || this.codes.length !== this.capacity * this.words) {
      this.codes = new Uint32Array(this.memory.buffer, 0, this.capacity * this.words);
    }
  }
}

/** Stored int8 vectors scored a batch at a time, so that the scratch stays small whatever the rescore size. */
const DOT_BATCH = 256;

/**
 * int8Cosine of a unit query with each of several stored int8 vectors (values then scale, see scan.ts),
 * the same numbers, in a scratch memory of one index: query, then a batch of vectors copied in, then
 * their dots. The memory grows to the largest batch seen, about DOT_BATCH × (dims + 12) bytes (400 KB
 * at 1536 dims), and stays.
 */
export class Int8Scorer {
  private readonly memory = new wasm.Memory({ initial: 1 });
  private readonly dots = instantiate(this.memory).dots;

  cosines(unit: Float32Array, stored: readonly Uint8Array[]): Float64Array {
    const out = new Float64Array(stored.length);
    for (let from = 0; from < stored.length; from += DOT_BATCH) {
      const batch = stored.slice(from, from + DOT_BATCH);
      const dots = this.batchDots(unit, batch);
      batch.forEach((vec, i) => {
        out[from + i] = int8Score(dots[i], vec);
      });
    }
    return out;
  }

  private batchDots(unit: Float32Array, stored: readonly Uint8Array[]): Float64Array {
    const dims = unit.length;
    const stride = dims + 4;
    const rows = align16(dims * 4);
    const out = align16(rows + stored.length * stride);
    ensureBytes(this.memory, out + stored.length * 8);
    const { buffer } = this.memory;
    new Float32Array(buffer, 0, dims).set(unit);
    const bytes = new Uint8Array(buffer);
    stored.forEach((vec, i) => {
      if (vec.length !== stride)
        throw new Error(`stored vector has ${vec.length - 4} dimensions, not ${dims}`);
      bytes.set(vec, rows + i * stride);
    });
    this.dots(0, rows, stride, stored.length, dims, out);
    return new Float64Array(buffer, out, stored.length);
  }
}
