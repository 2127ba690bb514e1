/**
 * Hamming distances in WebAssembly: `i64.popcnt` is one CPU instruction where JavaScript needs a dozen
 * bit operations per 32-bit word, and the scan over a scope's codes is most of a query's time. The
 * module is hand-assembled (no toolchain in the project); this is its text form:
 *
 *   (func (export "ham") (param $codes i32) (param $count i32) (param $words64 i32) (param $query i32)
 *         (param $out i32) (local $slot i32) (local $w i32) (local $p i32) (local $d i64)
 *     block  (br_if 0 (i32.eqz (local.get $count)))  (local.set $p (local.get $codes))
 *       loop $slots
 *         $d = 0, $w = 0
 *         loop $words  $d += popcnt(load64($p + 8w) ^ load64($query + 8w)); $w++; br_if $words ($w < $words64)
 *         store16($out + 2 × $slot, $d); $p += 8 × $words64; $slot++; br_if $slots ($slot < $count)
 *   ))
 */
// biome-ignore format: the bytes are grouped by section and instruction
const BYTES = Uint8Array.from([
  // header; type: (i32 × 5) → (); import env.memory; one function, exported as "ham"
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  0x01, 0x09, 0x01, 0x60, 0x05, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x00,
  0x02, 0x0f, 0x01, 0x03, 0x65, 0x6e, 0x76, 0x06, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 0x02, 0x00, 0x01,
  0x03, 0x02, 0x01, 0x00,
  0x07, 0x07, 0x01, 0x03, 0x68, 0x61, 0x6d, 0x00, 0x00,
  // code section: one body
  0x0a, 0x6f, 0x01, 0x6d,
  0x02, 0x03, 0x7f, 0x01, 0x7e, // locals: 3 × i32, 1 × i64
  0x02, 0x40, 0x20, 0x01, 0x45, 0x0d, 0x00, 0x20, 0x00, 0x21, 0x07,
  0x03, 0x40, 0x42, 0x00, 0x21, 0x08, 0x41, 0x00, 0x21, 0x06,
  0x03, 0x40,
  0x20, 0x08,
  0x20, 0x07, 0x20, 0x06, 0x41, 0x03, 0x74, 0x6a, 0x29, 0x03, 0x00,
  0x20, 0x03, 0x20, 0x06, 0x41, 0x03, 0x74, 0x6a, 0x29, 0x03, 0x00,
  0x85, 0x7b, 0x7c, 0x21, 0x08,
  0x20, 0x06, 0x41, 0x01, 0x6a, 0x22, 0x06, 0x20, 0x02, 0x49, 0x0d, 0x00,
  0x0b,
  0x20, 0x04, 0x20, 0x05, 0x41, 0x01, 0x74, 0x6a, 0x20, 0x08, 0xa7, 0x3b, 0x01, 0x00,
  0x20, 0x07, 0x20, 0x02, 0x41, 0x03, 0x74, 0x6a, 0x21, 0x07,
  0x20, 0x05, 0x41, 0x01, 0x6a, 0x22, 0x05, 0x20, 0x01, 0x49, 0x0d, 0x00,
  0x0b, 0x0b, 0x0b,
]);

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

const module = new wasm.Module(BYTES);
const PAGE = 65_536;

/**
 * Packed codes in a WebAssembly memory of their own, with room after them for a query and its
 * distances. `words` must be even (the scan reads 64 bits at a time; see codeWords).
 */
export class CodeMemory {
  private readonly memory: WasmMemory;
  private readonly ham: (codes: number, count: number, words64: number, query: number, out: number) => void;
  codes: Uint32Array;

  private readonly words: number;

  constructor(words: number, capacity: number) {
    this.words = words;
    this.memory = new wasm.Memory({ initial: 1 });
    const instance = new wasm.Instance(module, { env: { memory: this.memory } });
    this.ham = instance.exports.ham as CodeMemory["ham"];
    this.codes = new Uint32Array(0);
    this.reserve(capacity);
  }

  /** Room for `capacity` codes (and a query's scratch after them); old views are replaced. */
  reserve(capacity: number): void {
    const needed = capacity * this.words * 4 + this.words * 4 + capacity * 2 + 16;
    const have = this.memory.buffer.byteLength;
    if (needed > have) this.memory.grow(Math.ceil((needed - have) / PAGE));
    this.codes = new Uint32Array(this.memory.buffer, 0, capacity * this.words);
  }

  get bytes(): number {
    return this.memory.buffer.byteLength;
  }

  /** Hamming distance of each of the first `count` codes to `query`. The view is valid until the next call. */
  distances(count: number, query: Uint32Array): Uint16Array {
    const at = this.codes.byteLength;
    new Uint32Array(this.memory.buffer, at, this.words).set(query);
    const out = at + this.words * 4;
    if (count > 0) this.ham(0, count, this.words / 2, at, out);
    return new Uint16Array(this.memory.buffer, out, count);
  }
}
