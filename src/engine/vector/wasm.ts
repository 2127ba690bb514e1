/**
 * Just enough of a WebAssembly encoder to write the scan kernels (code-memory.ts) as readable code
 * instead of hand-assembled bytes (the project has no WebAssembly toolchain). A module imports one
 * memory as env.memory and exports functions that take i32 arguments and return nothing.
 */

/** Instructions, nested as convenient: flattened when the module is built. */
export type Code = number | readonly Code[];

export const type = { i32: 0x7f, i64: 0x7e, f64: 0x7c } as const;

export function uleb(value: number): number[] {
  const out: number[] = [];
  let n = value >>> 0;
  do {
    const byte = n & 0x7f;
    n >>>= 7;
    out.push(n === 0 ? byte : byte | 0x80);
  } while (n !== 0);
  return out;
}

export function sleb(value: number): number[] {
  const out: number[] = [];
  let n = value | 0;
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

/** A memory access: log2 of its natural alignment, then a constant byte offset added to the address. */
const memory =
  (opcode: number, align: number) =>
  (offset = 0) => [opcode, align, ...uleb(offset)];

export const op = {
  end: 0x0b,
  brIf: (depth: number) => [0x0d, ...uleb(depth)],
  get: (local: number) => [0x20, ...uleb(local)],
  set: (local: number) => [0x21, ...uleb(local)],
  tee: (local: number) => [0x22, ...uleb(local)],
  i32: (value: number) => [0x41, ...sleb(value)],
  i64Zero: [0x42, 0x00],
  f64Zero: [0x44, 0, 0, 0, 0, 0, 0, 0, 0],
  i32Load: memory(0x28, 2),
  i64Load: memory(0x29, 3),
  f32Load: memory(0x2a, 2),
  i32Load8S: memory(0x2c, 0),
  i32Load8U: memory(0x2d, 0),
  i32Store: memory(0x36, 2),
  f32Store: memory(0x38, 2),
  f64Store: memory(0x39, 3),
  i32Store16: memory(0x3b, 1),
  i32Eqz: 0x45,
  i32LtU: 0x49,
  i32Add: 0x6a,
  i32Mul: 0x6c,
  i32And: 0x71,
  i32Shl: 0x74,
  i32ShrU: 0x76,
  i64Popcnt: 0x7b,
  i64Add: 0x7c,
  i64Xor: 0x85,
  f64Add: 0xa0,
  f64Mul: 0xa2,
  i32WrapI64: 0xa7,
  f32DemoteF64: 0xb6,
  f64ConvertI32S: 0xb7,
  f64PromoteF32: 0xbb,
} as const;

/** `local += step` (i32). */
export const advance = (local: number, step: number): Code => [
  op.get(local),
  op.i32(step),
  op.i32Add,
  op.set(local),
];

/** `local = value`. */
export const assign = (local: number, value: Code): Code => [value, op.set(local)];

/** `base + (index << shift)` (i32): where element `index` is, of elements 2^shift bytes wide from `base`. */
export const element = (base: number, index: Code, shift: number): Code => [
  op.get(base),
  index,
  op.i32(shift),
  op.i32Shl,
  op.i32Add,
];

/** `local & ~3` (i32): how many of `local` go in whole groups of four. */
export const fours = (local: number): Code => [op.get(local), op.i32(-4), op.i32And];

/** `local < limit` (i32, unsigned). */
export const below = (local: number, limit: number): Code => [op.get(local), op.get(limit), op.i32LtU];

/** Runs `body` while `condition` holds, testing it first (a loop that may run no pass). */
export function whileTrue(condition: Code, body: Code): Code {
  return [
    0x02,
    0x40,
    condition,
    op.i32Eqz,
    op.brIf(0),
    0x03,
    0x40,
    body,
    condition,
    op.brIf(0),
    op.end,
    op.end,
  ];
}

/**
 * The kernels' outer loop: `lanes([0, 1, 2, 3])` (four items a pass, independent sums) while `cursor`
 * is below `groupsEnd` (where the whole groups of four end), then `lanes([0])` up to `end`.
 */
export function byFours(
  cursor: number,
  groupsEnd: number,
  end: number,
  lanes: (lanes: number[]) => Code,
): Code {
  return [
    whileTrue(below(cursor, groupsEnd), lanes([0, 1, 2, 3])),
    whileTrue(below(cursor, end), lanes([0])),
  ];
}

export interface WasmFunction {
  name: string;
  /** How many i32 parameters (locals 0 … params − 1). */
  params: number;
  /** Types of the further locals, numbered after the parameters. */
  locals: readonly number[];
  body: Code;
}

const vector = (items: readonly number[][]) => [...uleb(items.length), ...items.flat()];
const text = (value: string) => vector([...value].map((c) => [c.charCodeAt(0)]));
const section = (id: number, body: number[]) => [id, ...uleb(body.length), ...body];
const flatten = (code: Code): number[] => (typeof code === "number" ? [code] : code.flatMap(flatten));

/** The binary module: one type per function, the imported memory, the functions exported by name. */
export function wasmModule(functions: readonly WasmFunction[]): Uint8Array {
  const types = functions.map((f) => [
    0x60,
    ...vector(Array.from({ length: f.params }, () => [type.i32])),
    0,
  ]);
  const bodies = functions.map((f) => {
    const body = [...vector(f.locals.map((t) => [1, t])), ...flatten(f.body), op.end];
    return [...uleb(body.length), ...body];
  });
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vector(types)),
    ...section(2, vector([[...text("env"), ...text("memory"), 0x02, 0x00, 0x01]])),
    ...section(3, vector(functions.map((_, i) => uleb(i)))),
    ...section(7, vector(functions.map((f, i) => [...text(f.name), 0x00, ...uleb(i)]))),
    ...section(10, vector(bodies)),
  ]);
}
