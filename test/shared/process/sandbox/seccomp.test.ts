import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  AF_VSOCK,
  ARCHES,
  CLONE_NAMESPACES,
  DENIED_SYSCALLS,
  encodeFilter,
  filterFor,
  seccompFilter,
} from "../../../../src/shared/process/sandbox/seccomp.ts";

const RET_KILL_PROCESS = 0x80000000;
const RET_ALLOW = 0x7fff0000;
const RET_EPERM = 0x00050001;
const RET_ENOSYS = 0x00050026;

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_JSET_K = 0x45;
const BPF_RET_K = 0x06;

/** sizeof(struct seccomp_data): nr, arch, instruction_pointer, args[6]. */
const SECCOMP_DATA_SIZE = 64;

const NAMESPACE_FLAGS = {
  CLONE_NEWUSER: 0x10000000,
  CLONE_NEWNS: 0x00020000,
  CLONE_NEWPID: 0x20000000,
  CLONE_NEWNET: 0x40000000,
  CLONE_NEWCGROUP: 0x02000000,
  CLONE_NEWUTS: 0x04000000,
  CLONE_NEWIPC: 0x08000000,
  CLONE_NEWTIME: 0x00000080,
};

/** What fork(), posix_spawn and pthread_create pass to clone. */
const ORDINARY_CLONE_FLAGS = {
  fork: 0x01200011, // SIGCHLD | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID
  thread: 0x003d0f00, // VM FS FILES SIGHAND THREAD SYSVSEM SETTLS PARENT_SETTID CHILD_CLEARTID
  vfork: 0x00004111, // SIGCHLD | CLONE_VM | CLONE_VFORK
};

/** Audit values of architectures other than the two the filter knows. */
const AUDIT_I386 = 0x40000003;
const AUDIT_ARM = 0x40000028;

interface Decoded {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

/** struct sock_filter[] back into instructions, as the kernel reads it. */
function decode(bytes: Buffer): Decoded[] {
  expect(bytes.length % 8).toBe(0);
  const program: Decoded[] = [];
  for (let offset = 0; offset < bytes.length; offset += 8) {
    program.push({
      code: bytes.readUInt16LE(offset),
      jt: bytes.readUInt8(offset + 2),
      jf: bytes.readUInt8(offset + 3),
      k: bytes.readUInt32LE(offset + 4),
    });
  }
  return program;
}

interface SeccompData {
  nr: number;
  arch: number;
  /** The full 64-bit first argument (the filter may only read its low half). */
  arg0?: bigint;
}

function seccompData({ nr, arch, arg0 = 0n }: SeccompData): Buffer {
  const data = Buffer.alloc(SECCOMP_DATA_SIZE);
  data.writeUInt32LE(nr >>> 0, 0);
  data.writeUInt32LE(arch >>> 0, 4);
  data.writeBigUInt64LE(0x7f00_1234_5678n, 8); // instruction pointer: any
  data.writeBigUInt64LE(BigInt.asUintN(64, arg0), 16);
  return data;
}

/**
 * A classic-BPF interpreter for exactly the opcodes the builder uses; anything else, a load outside
 * seccomp_data, a jump past the end or falling off the end fails the test.
 */
function run(program: readonly Decoded[], input: SeccompData): number {
  const data = seccompData(input);
  let accumulator = 0;
  let pc = 0;
  for (let steps = 0; steps <= program.length; steps++) {
    const instruction = program[pc];
    if (!instruction) throw new Error(`pc ${pc} is outside the program (${program.length} instructions)`);
    const { code, jt, jf, k } = instruction;
    const jump = (taken: boolean) => {
      pc += 1 + (taken ? jt : jf);
    };
    switch (code) {
      case BPF_LD_W_ABS:
        if (k % 4 !== 0 || k + 4 > SECCOMP_DATA_SIZE) throw new Error(`load at bad offset ${k}`);
        accumulator = data.readUInt32LE(k);
        pc += 1;
        break;
      case BPF_JEQ_K:
        jump(accumulator === k >>> 0);
        break;
      case BPF_JGE_K:
        jump(accumulator >= k >>> 0);
        break;
      case BPF_JSET_K:
        jump((accumulator & k) >>> 0 !== 0);
        break;
      case BPF_RET_K:
        return k >>> 0;
      default:
        throw new Error(`unexpected opcode 0x${code.toString(16)} at ${pc}`);
    }
  }
  throw new Error("the program did not return");
}

const archNames = Object.keys(ARCHES);

function programOf(arch: string): Decoded[] {
  const program = filterFor(arch);
  if (!program) throw new Error(`no filter for ${arch}`);
  return decode(encodeFilter(program));
}

describe("the test's interpreter", () => {
  it("refuses what the kernel would refuse or the builder never emits", () => {
    const ret = { code: BPF_RET_K, jt: 0, jf: 0, k: RET_ALLOW };
    expect(() => run([{ code: 0x07, jt: 0, jf: 0, k: 0 }, ret], { nr: 0, arch: 0 })).toThrow(/opcode/);
    expect(() => run([{ code: BPF_JEQ_K, jt: 5, jf: 5, k: 0 }, ret], { nr: 0, arch: 0 })).toThrow(/outside/);
    expect(() => run([{ code: BPF_LD_W_ABS, jt: 0, jf: 0, k: 64 }, ret], { nr: 0, arch: 0 })).toThrow(
      /offset/,
    );
    expect(() => run([{ code: BPF_LD_W_ABS, jt: 0, jf: 0, k: 0 }], { nr: 0, arch: 0 })).toThrow(/outside/);
  });

  it("reads nr, arch and the low half of args[0] where seccomp_data has them", () => {
    const input = { nr: 0x11223344, arch: 0xc000003e, arg0: 0xaabbccdd_01020304n };
    // Loads the word at `offset` and answers 0 when it equals `word`, 1 otherwise.
    const equals = (offset: number, word: number) =>
      run(
        [
          { code: BPF_LD_W_ABS, jt: 0, jf: 0, k: offset },
          { code: BPF_JEQ_K, jt: 0, jf: 1, k: word },
          { code: BPF_RET_K, jt: 0, jf: 0, k: 0 },
          { code: BPF_RET_K, jt: 0, jf: 0, k: 1 },
        ],
        input,
      ) === 0;
    expect(equals(0, 0x11223344)).toBe(true);
    expect(equals(4, 0xc000003e)).toBe(true);
    expect(equals(16, 0x01020304)).toBe(true);
    expect(equals(20, 0xaabbccdd)).toBe(true);
    expect(equals(16, 0xaabbccdd)).toBe(false);
  });
});

describe("encodeFilter", () => {
  it("writes 8 bytes per instruction: code u16, jt u8, jf u8, k u32, little-endian", () => {
    const bytes = encodeFilter([
      { code: 0x1234, jt: 0xab, jf: 0xcd, k: 0xdeadbeef },
      { code: BPF_RET_K, jt: 0, jf: 0, k: RET_ALLOW },
    ]);
    expect(bytes.length).toBe(16);
    expect([...bytes.subarray(0, 8)]).toEqual([0x34, 0x12, 0xab, 0xcd, 0xef, 0xbe, 0xad, 0xde]);
    expect([...bytes.subarray(8, 16)]).toEqual([0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0x7f]);
  });

  it.each(archNames)("round-trips the %s program without truncating a field", (arch) => {
    const program = filterFor(arch) ?? [];
    const bytes = encodeFilter(program);
    expect(bytes.length).toBe(program.length * 8);
    expect(decode(bytes)).toEqual(program.map((instruction) => ({ ...instruction, k: instruction.k >>> 0 })));
  });
});

describe("the syscall tables", () => {
  it("denies x86-64's modify_ldt (154) and uselib (134)", () => {
    expect(ARCHES.x64.own).toEqual({ modify_ldt: 154, uselib: 134 });
  });

  it("has the right x86-64 numbers for well-known calls", () => {
    const { numbers, clone, clone3, socket, audit } = ARCHES.x64;
    expect(numbers).toMatchObject({ ptrace: 101, mount: 165, unshare: 272, setns: 308, bpf: 321 });
    expect(numbers).toMatchObject({ io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427 });
    expect(socket).toBe(41);
    expect(clone).toBe(56);
    expect(clone3).toBe(435);
    expect(audit).toBe(0xc000003e);
  });

  it("has the right arm64 numbers for well-known calls", () => {
    const { numbers, clone, clone3, socket, audit } = ARCHES.arm64;
    expect(numbers).toMatchObject({ ptrace: 117, mount: 40, unshare: 97, setns: 268, bpf: 280 });
    expect(numbers).toMatchObject({ io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427 });
    expect(socket).toBe(198);
    expect(clone).toBe(220);
    expect(clone3).toBe(435);
    expect(audit).toBe(0xc00000b7);
  });

  it.each(archNames)("%s numbers every denied call, each with a number of its own", (arch) => {
    const { numbers, clone, clone3, socket } = ARCHES[arch];
    expect(Object.keys(numbers).sort()).toEqual([...DENIED_SYSCALLS].sort());
    const values = Object.values(numbers);
    expect(new Set(values).size).toBe(values.length);
    expect(values).not.toContain(clone);
    expect(values).not.toContain(clone3);
    expect(values).not.toContain(socket);
  });

  it("covers every kind of namespace in CLONE_NAMESPACES and nothing else", () => {
    const all = Object.values(NAMESPACE_FLAGS).reduce((sum, flag) => sum | flag, 0);
    expect(CLONE_NAMESPACES >>> 0).toBe(all >>> 0);
  });

  it("has no filter for an architecture without a table", () => {
    expect(filterFor("riscv64")).toBeNull();
    expect(filterFor("ia32")).toBeNull();
  });
});

describe.each(archNames)("the %s filter", (arch) => {
  const spec = ARCHES[arch];
  const program = programOf(arch);
  const call = (nr: number, arg0?: bigint) => run(program, { nr, arch: spec.audit, arg0 });
  const denied = new Set([...Object.values(spec.numbers), ...Object.values(spec.own ?? {})]);

  it("uses only the builder's opcodes and keeps every jump inside the program", () => {
    const known = new Set([BPF_LD_W_ABS, BPF_JEQ_K, BPF_JGE_K, BPF_JSET_K, BPF_RET_K]);
    program.forEach(({ code, jt, jf }, index) => {
      expect(known.has(code), `opcode 0x${code.toString(16)} at ${index}`).toBe(true);
      if (code === BPF_JEQ_K || code === BPF_JGE_K || code === BPF_JSET_K) {
        expect(index + 1 + jt).toBeLessThan(program.length);
        expect(index + 1 + jf).toBeLessThan(program.length);
      }
    });
    expect(program.at(-1)?.code).toBe(BPF_RET_K);
    expect(program.length).toBeLessThanOrEqual(4096); // BPF_MAXINSNS
  });

  it("checks the architecture before anything else", () => {
    expect(program[0]).toEqual({ code: BPF_LD_W_ABS, jt: 0, jf: 0, k: 4 });
  });

  it.each(DENIED_SYSCALLS)("fails %s with EPERM", (name) => {
    expect(call(spec.numbers[name])).toBe(RET_EPERM);
  });

  it.each(Object.entries(spec.own ?? {}))(
    "fails %s, a call of this architecture alone, with EPERM",
    (_name, nr) => {
      expect(call(nr)).toBe(RET_EPERM);
    },
  );

  it.each(Object.entries(NAMESPACE_FLAGS))("fails clone with %s with EPERM", (_name, flag) => {
    expect(call(spec.clone, BigInt(flag))).toBe(RET_EPERM);
    expect(call(spec.clone, BigInt(flag | ORDINARY_CLONE_FLAGS.fork))).toBe(RET_EPERM);
    expect(call(spec.clone, BigInt(flag | ORDINARY_CLONE_FLAGS.thread))).toBe(RET_EPERM);
  });

  it.each(Object.entries(ORDINARY_CLONE_FLAGS))("allows clone for a %s", (_name, flags) => {
    expect(call(spec.clone, BigInt(flags))).toBe(RET_ALLOW);
  });

  it("decides clone on its flags alone: any namespace bit fails it, none lets it through", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), (arg0) => {
        const low = Number(arg0 & 0xffffffffn);
        const expected = (low & CLONE_NAMESPACES) !== 0 ? RET_EPERM : RET_ALLOW;
        expect(call(spec.clone, arg0)).toBe(expected);
      }),
    );
  });

  it("answers clone3 with ENOSYS, whatever its arguments", () => {
    expect(call(spec.clone3)).toBe(RET_ENOSYS);
    expect(call(spec.clone3, BigInt(NAMESPACE_FLAGS.CLONE_NEWUSER))).toBe(RET_ENOSYS);
  });

  it("fails a vsock socket with EPERM and lets every other family through", () => {
    expect(call(spec.socket, BigInt(AF_VSOCK))).toBe(RET_EPERM);
    expect(call(spec.socket, (1n << 32n) | BigInt(AF_VSOCK))).toBe(RET_EPERM);
    for (const family of [1, 2, 10, 16, 17]) expect(call(spec.socket, BigInt(family))).toBe(RET_ALLOW);
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), (arg0) => {
        const expected = Number(arg0 & 0xffffffffn) === AF_VSOCK ? RET_EPERM : RET_ALLOW;
        expect(call(spec.socket, arg0)).toBe(expected);
      }),
    );
  });

  it("kills a process of another architecture, whatever it calls", () => {
    const others = [...archNames.filter((name) => name !== arch).map((name) => ARCHES[name].audit)];
    others.push(AUDIT_I386, AUDIT_ARM, 0);
    for (const audit of others) {
      for (const nr of [0, 1, spec.clone, spec.clone3, spec.socket, ...denied]) {
        expect(run(program, { nr, arch: audit })).toBe(RET_KILL_PROCESS);
      }
    }
    fc.assert(
      fc.property(fc.nat({ max: 0xffffffff }), fc.nat({ max: 0xffffffff }), (audit, nr) => {
        fc.pre(audit !== spec.audit);
        expect(run(program, { nr, arch: audit })).toBe(RET_KILL_PROCESS);
      }),
    );
  });

  it("allows every other system call", () => {
    const limit = spec.abiLimit ?? 0x100000000;
    fc.assert(
      fc.property(
        fc.oneof(fc.nat({ max: 1024 }), fc.nat({ max: limit - 1 })),
        fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
        (nr, arg0) => {
          fc.pre(!denied.has(nr) && nr !== spec.clone && nr !== spec.clone3);
          fc.pre(nr !== spec.socket || Number(arg0 & 0xffffffffn) !== AF_VSOCK);
          expect(call(nr, arg0)).toBe(RET_ALLOW);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("allows the calls every program makes", () => {
    const common =
      arch === "x64"
        ? { read: 0, write: 1, openat: 257, execve: 59 }
        : { read: 63, write: 64, openat: 56, execve: 221 };
    for (const nr of Object.values(common)) expect(call(nr)).toBe(RET_ALLOW);
  });
});

describe("the x64 filter and the x32 ABI", () => {
  const program = programOf("x64");
  const { audit, abiLimit } = ARCHES.x64;

  it("kills any call numbered at or above 0x40000000", () => {
    expect(abiLimit).toBe(0x40000000);
    for (const nr of [0x40000000, 0x40000000 + 101, 0x40000000 + 56, 0x40000000 + 435, 0xffffffff]) {
      expect(run(program, { nr, arch: audit })).toBe(RET_KILL_PROCESS);
    }
    fc.assert(
      fc.property(fc.integer({ min: 0x40000000, max: 0xffffffff }), (nr) => {
        expect(run(program, { nr, arch: audit })).toBe(RET_KILL_PROCESS);
      }),
    );
  });

  it("lets the number just below the limit through", () => {
    expect(run(program, { nr: 0x3fffffff, arch: audit })).toBe(RET_ALLOW);
  });
});

describe("seccompFilter", () => {
  it("is this machine's program, encoded once", () => {
    const filter = seccompFilter();
    const program = filterFor(process.arch);
    if (program === null) {
      expect(filter).toBeNull();
      return;
    }
    expect(filter).toEqual(encodeFilter(program));
    expect(seccompFilter()).toBe(filter);
  });
});
