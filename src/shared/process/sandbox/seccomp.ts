/**
 * The seccomp filter every sandboxed process runs under (classic BPF, as bubblewrap's `--seccomp FD`
 * takes it): the system calls that change what a process can see or reach — mounts, namespaces (a
 * clone that makes one included), ptrace, kernel modules and keyrings, bpf, perf — fail with EPERM; a process of another architecture
 * (the x32 ABI, 32-bit calls on a 64-bit kernel) is killed, so no second syscall table slips past.
 * So do vsock sockets, which no network namespace confines (a VM's hypervisor and whatever listens on
 * vsock on this machine answer them), and io_uring, whose operations (a socket among them) no filter sees.
 */

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_JSET_K = 0x45;
const BPF_RET_K = 0x06;
const RET_KILL_PROCESS = 0x80000000;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;
/** The address family of virtual machine sockets (vsock). */
export const AF_VSOCK = 40;
/** CLONE_NEWTIME, NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET: a new namespace of any kind. */
export const CLONE_NAMESPACES = 0x00000080 | 0x00020000 | 0x7e000000;
/** struct seccomp_data: nr at 0, arch at 4, the low half of the first argument at 16. */
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const OFFSET_ARG0_LOW = 16;

/** Denied by name; numbers per architecture below. */
export const DENIED_SYSCALLS = [
  "ptrace",
  "process_vm_readv",
  "process_vm_writev",
  "mount",
  "umount2",
  "pivot_root",
  "chroot",
  "unshare",
  "setns",
  "open_tree",
  "move_mount",
  "fsopen",
  "fsconfig",
  "fsmount",
  "fspick",
  "mount_setattr",
  "kexec_load",
  "kexec_file_load",
  "init_module",
  "finit_module",
  "delete_module",
  "bpf",
  "perf_event_open",
  "userfaultfd",
  "keyctl",
  "add_key",
  "request_key",
  "open_by_handle_at",
  "name_to_handle_at",
  "reboot",
  "swapon",
  "swapoff",
  "acct",
  "settimeofday",
  "clock_settime",
  "io_uring_setup",
  "io_uring_enter",
  "io_uring_register",
] as const;

type Syscall = (typeof DENIED_SYSCALLS)[number];

/** The new mount API has the same numbers on every architecture. */
const GENERIC = {
  open_tree: 428,
  move_mount: 429,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  mount_setattr: 442,
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
};

interface Arch {
  audit: number;
  clone: number;
  clone3: number;
  socket: number;
  /** Numbers at or above this belong to another ABI on the same architecture (x32). */
  abiLimit?: number;
  numbers: Record<Syscall, number>;
  /** Denied calls only this architecture has. */
  own?: Record<string, number>;
}

export const ARCHES: Record<string, Arch> = {
  x64: {
    audit: 0xc000003e,
    clone: 56,
    clone3: 435,
    socket: 41,
    abiLimit: 0x40000000,
    numbers: {
      ...GENERIC,
      ptrace: 101,
      process_vm_readv: 310,
      process_vm_writev: 311,
      mount: 165,
      umount2: 166,
      pivot_root: 155,
      chroot: 161,
      unshare: 272,
      setns: 308,
      kexec_load: 246,
      kexec_file_load: 320,
      init_module: 175,
      finit_module: 313,
      delete_module: 176,
      bpf: 321,
      perf_event_open: 298,
      userfaultfd: 323,
      keyctl: 250,
      add_key: 248,
      request_key: 249,
      open_by_handle_at: 304,
      name_to_handle_at: 303,
      reboot: 169,
      swapon: 167,
      swapoff: 168,
      acct: 163,
      settimeofday: 164,
      clock_settime: 227,
    },
    // The x86 local descriptor table, which only 16-bit code and old emulators use (and the source of
    // several kernel escalations); uselib, a pre-ELF loader call.
    own: { modify_ldt: 154, uselib: 134 },
  },
  arm64: {
    audit: 0xc00000b7,
    clone: 220,
    clone3: 435,
    socket: 198,
    numbers: {
      ...GENERIC,
      ptrace: 117,
      process_vm_readv: 270,
      process_vm_writev: 271,
      mount: 40,
      umount2: 39,
      pivot_root: 41,
      chroot: 51,
      unshare: 97,
      setns: 268,
      kexec_load: 104,
      kexec_file_load: 294,
      init_module: 105,
      finit_module: 273,
      delete_module: 106,
      bpf: 280,
      perf_event_open: 241,
      userfaultfd: 282,
      keyctl: 219,
      add_key: 217,
      request_key: 218,
      open_by_handle_at: 265,
      name_to_handle_at: 264,
      reboot: 142,
      swapon: 224,
      swapoff: 225,
      acct: 89,
      settimeofday: 170,
      clock_settime: 112,
    },
  },
};

interface Instruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

const load = (offset: number): Instruction => ({ code: BPF_LD_W_ABS, jt: 0, jf: 0, k: offset });
const ret = (k: number): Instruction => ({ code: BPF_RET_K, jt: 0, jf: 0, k });

/** The filter's instructions for `arch` (process.arch naming); null where none is known. */
export function filterFor(arch: string): Instruction[] | null {
  const spec = ARCHES[arch];
  if (!spec) return null;
  const numbers = [...new Set([...Object.values(spec.numbers), ...Object.values(spec.own ?? {})])].sort(
    (a, b) => a - b,
  );
  const program: Instruction[] = [
    load(OFFSET_ARCH),
    { code: BPF_JEQ_K, jt: 1, jf: 0, k: spec.audit },
    ret(RET_KILL_PROCESS),
    load(OFFSET_NR),
  ];
  if (spec.abiLimit !== undefined) {
    program.push({ code: BPF_JGE_K, jt: 0, jf: 1, k: spec.abiLimit }, ret(RET_KILL_PROCESS));
  }
  // clone with a namespace flag fails; clone3 (its flags sit behind a pointer no filter can read) says
  // ENOSYS, so the C library falls back to clone.
  program.push(
    { code: BPF_JEQ_K, jt: 0, jf: 4, k: spec.clone },
    load(OFFSET_ARG0_LOW),
    { code: BPF_JSET_K, jt: 0, jf: 1, k: CLONE_NAMESPACES },
    ret(RET_ERRNO | EPERM),
    ret(RET_ALLOW),
    { code: BPF_JEQ_K, jt: 0, jf: 1, k: spec.clone3 },
    ret(RET_ERRNO | ENOSYS),
  );
  // A socket of the vsock family fails; any other family is the network namespace's to confine.
  program.push(
    { code: BPF_JEQ_K, jt: 0, jf: 4, k: spec.socket },
    load(OFFSET_ARG0_LOW),
    { code: BPF_JEQ_K, jt: 0, jf: 1, k: AF_VSOCK },
    ret(RET_ERRNO | EPERM),
    ret(RET_ALLOW),
  );
  // Each denied number jumps to the shared EPERM return at the end; the rest fall through to ALLOW.
  numbers.forEach((nr, index) => {
    program.push({ code: BPF_JEQ_K, jt: numbers.length - index, jf: 0, k: nr });
  });
  program.push(ret(RET_ALLOW), ret(RET_ERRNO | EPERM));
  return program;
}

/** The filter as the kernel reads it (struct sock_filter[], little-endian on both architectures). */
export function encodeFilter(program: readonly Instruction[]): Buffer {
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach(({ code, jt, jf, k }, index) => {
    bytes.writeUInt16LE(code, index * 8);
    bytes.writeUInt8(jt, index * 8 + 2);
    bytes.writeUInt8(jf, index * 8 + 3);
    bytes.writeUInt32LE(k >>> 0, index * 8 + 4);
  });
  return bytes;
}

let cached: Buffer | null | undefined;
/** This machine's filter, encoded once; null on an architecture without a table (no filter then). */
export function seccompFilter(): Buffer | null {
  if (cached === undefined) {
    const program = filterFor(process.arch);
    cached = program ? encodeFilter(program) : null;
  }
  return cached;
}
