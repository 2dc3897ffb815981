// The seccomp filter IsolatedProcessSandbox hands to bubblewrap (`--seccomp FD`): a classic BPF
// program, generated here so that no native binding is needed (README "Sandboxes").
//
// Syscall numbers are those of the kernel headers (x86_64: asm/unistd_64.h; aarch64: the generic
// table, asm-generic/unistd.h). fchmodat2 (452, Linux 6.6) postdates Debian 12's headers; its
// number is the same on every architecture (arch/x86/entry/syscalls/syscall_64.tbl).

/** `AUDIT_ARCH_X86_64` (EM_X86_64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE). */
export const AUDIT_ARCH_X86_64 = 0xc000003e;
/** `AUDIT_ARCH_AARCH64` (EM_AARCH64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE). */
export const AUDIT_ARCH_AARCH64 = 0xc00000b7;

/** Verdicts (linux/seccomp.h). */
export const SECCOMP_RET_KILL_PROCESS = 0x80000000;
export const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EPERM = 1;
/** `SECCOMP_RET_ERRNO | EPERM`: the call fails as if the kernel refused it. */
export const SECCOMP_RET_EPERM = (SECCOMP_RET_ERRNO | EPERM) >>> 0;

/** Mode bits a sandbox may never set: S_ISUID | S_ISGID. */
export const SET_ID_BITS = 0o6000;
// O_CREAT | __O_TMPFILE: the open flags with which the mode argument is used.
const CREATING = 0o100 | 0o20000000;
// x32 system calls are x86_64 calls with this bit set: a second table the list below misses.
const X32_SYSCALL_BIT = 0x40000000;

/**
 * System calls refused with EPERM: mounting, namespaces, tracing, kernel keyrings, modules,
 * BPF, clocks, swap, reboot, accounting, quotas, file handles (which open by inode, around the
 * mount view), port I/O, the kernel log, personality (which can turn off ASLR), io_uring
 * (whose operations no seccomp filter sees), and fallocate (disk reserved without writes).
 */
export const DENIED_SYSCALLS = [
  'mount',
  'umount2',
  'pivot_root',
  'ptrace',
  'bpf',
  'keyctl',
  'add_key',
  'request_key',
  'perf_event_open',
  'userfaultfd',
  'unshare',
  'setns',
  'init_module',
  'finit_module',
  'delete_module',
  'kexec_load',
  'kexec_file_load',
  'clock_settime',
  'clock_adjtime',
  'settimeofday',
  'adjtimex',
  'swapon',
  'swapoff',
  'reboot',
  'acct',
  'quotactl',
  'quotactl_fd',
  'name_to_handle_at',
  'open_by_handle_at',
  'iopl',
  'ioperm',
  'syslog',
  'personality',
  'io_uring_setup',
  'io_uring_enter',
  'io_uring_register',
  'openat2',
  // Reserves disk without writing it, faster than the jail's disk watchdog polls: 60 parallel
  // reservations just under RLIMIT_FSIZE took 3.3 GB past a 64 MB bound (README "Sandboxes").
  'fallocate',
] as const;

/** Where a call's mode sits: refused when it carries {@link SET_ID_BITS}. */
interface ModeCheck {
  /** Argument index of the mode. */
  mode: number;
  /** Argument index of open flags: the mode counts only when they create a file. */
  flags?: number;
}

/** System calls that set a mode, and where it sits. openat2 (mode inside a struct) is denied. */
export const MODE_SYSCALLS: Record<string, ModeCheck> = {
  chmod: { mode: 1 },
  fchmod: { mode: 1 },
  fchmodat: { mode: 2 },
  fchmodat2: { mode: 2 },
  mknod: { mode: 1 },
  mknodat: { mode: 2 },
  creat: { mode: 1 },
  open: { flags: 1, mode: 2 },
  openat: { flags: 2, mode: 3 },
};

type SyscallTable = Readonly<Record<string, number>>;

/** x86_64 numbers (asm/unistd_64.h). */
export const X86_64_SYSCALLS: SyscallTable = {
  open: 2,
  creat: 85,
  chmod: 90,
  fchmod: 91,
  ptrace: 101,
  syslog: 103,
  mknod: 133,
  personality: 135,
  pivot_root: 155,
  adjtimex: 159,
  acct: 163,
  settimeofday: 164,
  mount: 165,
  umount2: 166,
  swapon: 167,
  swapoff: 168,
  reboot: 169,
  iopl: 172,
  ioperm: 173,
  init_module: 175,
  delete_module: 176,
  quotactl: 179,
  clock_settime: 227,
  kexec_load: 246,
  add_key: 248,
  request_key: 249,
  keyctl: 250,
  openat: 257,
  mknodat: 259,
  fchmodat: 268,
  unshare: 272,
  perf_event_open: 298,
  name_to_handle_at: 303,
  open_by_handle_at: 304,
  clock_adjtime: 305,
  setns: 308,
  finit_module: 313,
  kexec_file_load: 320,
  bpf: 321,
  userfaultfd: 323,
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  openat2: 437,
  fallocate: 285,
  quotactl_fd: 443,
  fchmodat2: 452,
};

/** aarch64 numbers (asm-generic/unistd.h): no open, creat, chmod, mknod, iopl or ioperm there. */
export const AARCH64_SYSCALLS: SyscallTable = {
  mknodat: 33,
  umount2: 39,
  mount: 40,
  pivot_root: 41,
  fchmod: 52,
  fchmodat: 53,
  openat: 56,
  quotactl: 60,
  acct: 89,
  personality: 92,
  unshare: 97,
  kexec_load: 104,
  init_module: 105,
  delete_module: 106,
  clock_settime: 112,
  syslog: 116,
  ptrace: 117,
  reboot: 142,
  settimeofday: 170,
  adjtimex: 171,
  add_key: 217,
  request_key: 218,
  keyctl: 219,
  swapon: 224,
  swapoff: 225,
  perf_event_open: 241,
  name_to_handle_at: 264,
  open_by_handle_at: 265,
  clock_adjtime: 266,
  setns: 268,
  finit_module: 273,
  bpf: 280,
  userfaultfd: 282,
  kexec_file_load: 294,
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  fallocate: 47,
  openat2: 437,
  quotactl_fd: 443,
  fchmodat2: 452,
};

/** One classic BPF instruction (`struct sock_filter`). */
export interface BpfInstruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

// Instruction classes and modes (linux/bpf_common.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JSET_K = 0x45;
const JGE_K = 0x35;
const RET_K = 0x06;
// Offsets in `struct seccomp_data` (linux/seccomp.h): nr, arch, instruction_pointer, args[6].
const NR = 0;
const ARCH = 4;
// The low 32 bits of args[i] (little-endian on both architectures); modes and flags fit there.
const argLow = (index: number) => 16 + 8 * index;

const load = (offset: number): BpfInstruction => ({ code: LD_W_ABS, jt: 0, jf: 0, k: offset });
const ret = (verdict: number): BpfInstruction => ({ code: RET_K, jt: 0, jf: 0, k: verdict >>> 0 });
const jump = (code: number, k: number, jt: number, jf: number): BpfInstruction => ({
  code,
  jt,
  jf,
  k: k >>> 0,
});

/** The instructions for one architecture: the accumulator holds nothing on entry. */
function architectureBlock(table: SyscallTable, x32: boolean): BpfInstruction[] {
  const block: BpfInstruction[] = [load(NR)];
  if (x32) block.push(jump(JGE_K, X32_SYSCALL_BIT, 0, 1), ret(SECCOMP_RET_KILL_PROCESS));
  for (const name of DENIED_SYSCALLS) {
    const number = table[name];
    if (number !== undefined) block.push(jump(JEQ_K, number, 0, 1), ret(SECCOMP_RET_EPERM));
  }
  for (const [name, check] of Object.entries(MODE_SYSCALLS)) {
    const number = table[name];
    if (number === undefined) continue;
    const test: BpfInstruction[] = [];
    if (check.flags !== undefined) {
      // Not creating: the mode argument is meaningless, allow.
      test.push(load(argLow(check.flags)), jump(JSET_K, CREATING, 0, 3));
    }
    test.push(load(argLow(check.mode)), jump(JSET_K, SET_ID_BITS, 0, 1));
    test.push(ret(SECCOMP_RET_EPERM), ret(SECCOMP_RET_ALLOW));
    block.push(jump(JEQ_K, number, 0, test.length), ...test);
  }
  block.push(ret(SECCOMP_RET_ALLOW));
  return block;
}

/**
 * The sandbox's filter: any architecture but x86_64 and aarch64 (a 32-bit `int 0x80` call, the
 * x32 table) kills the process; {@link DENIED_SYSCALLS} fail with EPERM, and so do the
 * {@link MODE_SYSCALLS} whose mode carries set-uid or set-gid bits; everything else is allowed.
 */
export function seccompInstructions(): BpfInstruction[] {
  const x86 = architectureBlock(X86_64_SYSCALLS, true);
  const arm = architectureBlock(AARCH64_SYSCALLS, false);
  return [
    load(ARCH),
    jump(JEQ_K, AUDIT_ARCH_X86_64, 2, 0),
    jump(JEQ_K, AUDIT_ARCH_AARCH64, x86.length + 1, 0),
    // Neither architecture.
    ret(SECCOMP_RET_KILL_PROCESS),
    ...x86,
    ...arm,
  ].map((instruction, index, all) => {
    // A classic BPF jump offset is 8 bits: fail loudly at build, never with a wrong program.
    if (instruction.jt > 255 || instruction.jf > 255 || index + instruction.jt >= all.length) {
      throw new Error(`seccomp filter jump out of range at instruction ${index}`);
    }
    return instruction;
  });
}

/** The filter as bubblewrap reads it: `struct sock_filter` records in host byte order. */
let program: Buffer | undefined;
export function seccompProgram(): Buffer {
  program ??= encode();
  return program;
}

function encode(): Buffer {
  const instructions = seccompInstructions();
  const bytes = Buffer.alloc(instructions.length * 8);
  instructions.forEach((instruction, index) => {
    bytes.writeUInt16LE(instruction.code, index * 8);
    bytes.writeUInt8(instruction.jt, index * 8 + 2);
    bytes.writeUInt8(instruction.jf, index * 8 + 3);
    bytes.writeUInt32LE(instruction.k, index * 8 + 4);
  });
  return bytes;
}

/** Whether this machine runs one of the architectures the filter knows. */
export function seccompArchitectureSupported(arch: string = process.arch): boolean {
  return arch === 'x64' || arch === 'arm64';
}
