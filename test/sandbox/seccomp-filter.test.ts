// The generated seccomp program, run through a small classic-BPF interpreter: every verdict the
// README promises, for both architectures, and a property over arbitrary calls.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AARCH64_SYSCALLS,
  AUDIT_ARCH_AARCH64,
  AUDIT_ARCH_X86_64,
  DENIED_SYSCALLS,
  MODE_SYSCALLS,
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_EPERM,
  SECCOMP_RET_KILL_PROCESS,
  seccompProgram,
  X86_64_SYSCALLS,
} from '../../src/sandbox/seccomp-filter.js';

const AUDIT_ARCH_I386 = 0x40000003;

/** Runs the program (as bytes, as the kernel gets it) on one `struct seccomp_data`. */
function verdict(arch: number, nr: number, args: number[] = []): number {
  const data = Buffer.alloc(64);
  data.writeInt32LE(nr | 0, 0);
  data.writeUInt32LE(arch >>> 0, 4);
  args.forEach((value, index) => {
    data.writeUInt32LE(value >>> 0, 16 + 8 * index);
  });
  const program = seccompProgram();
  let accumulator = 0;
  for (let pc = 0; pc * 8 < program.length; pc++) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) accumulator = data.readUInt32LE(k);
    else if (code === 0x06) return k;
    else if (code === 0x15) pc += accumulator === k ? jt : jf;
    else if (code === 0x45) pc += (accumulator & k) !== 0 ? jt : jf;
    else if (code === 0x35) pc += accumulator >= k ? jt : jf;
    else throw new Error(`unexpected BPF code ${code}`);
  }
  throw new Error('the program fell off its end');
}

const tables = [
  ['x86_64', AUDIT_ARCH_X86_64, X86_64_SYSCALLS],
  ['aarch64', AUDIT_ARCH_AARCH64, AARCH64_SYSCALLS],
] as const;

describe('seccomp filter', () => {
  it('uses the x86_64 numbers of this machine’s kernel headers', () => {
    const header = '/usr/include/x86_64-linux-gnu/asm/unistd_64.h';
    const text = readFileSync(header, 'utf8');
    for (const [name, number] of Object.entries(X86_64_SYSCALLS)) {
      const defined = new RegExp(`#define __NR_${name} (\\d+)`).exec(text)?.[1];
      // fchmodat2 (Linux 6.6) is newer than Debian 12's headers.
      if (defined !== undefined || name !== 'fchmodat2') expect(Number(defined), name).toBe(number);
    }
  });

  it('kills any other architecture: a 32-bit int 0x80 call, the x32 table', () => {
    expect(verdict(AUDIT_ARCH_I386, 21)).toBe(SECCOMP_RET_KILL_PROCESS); // i386 mount
    expect(verdict(AUDIT_ARCH_X86_64, 0x40000000 + 165)).toBe(SECCOMP_RET_KILL_PROCESS);
  });

  for (const [name, arch, table] of tables) {
    it(`${name}: refuses every listed call with EPERM and allows ordinary ones`, () => {
      for (const call of DENIED_SYSCALLS) {
        if (table[call] !== undefined)
          expect(verdict(arch, table[call]), call).toBe(SECCOMP_RET_EPERM);
      }
      expect(verdict(arch, table.openat!, [0, 0, 0o2, 0o644])).toBe(SECCOMP_RET_ALLOW);
      expect(verdict(arch, 0)).toBe(SECCOMP_RET_ALLOW); // read / io_setup
    });

    it(`${name}: refuses set-uid and set-gid modes, and only them`, () => {
      for (const [call, check] of Object.entries(MODE_SYSCALLS)) {
        const nr = table[call];
        if (nr === undefined) continue;
        const args = (mode: number, flags = 0o100) => {
          const values = [0, 0, 0, 0];
          values[check.mode] = mode;
          if (check.flags !== undefined) values[check.flags] = flags;
          return values;
        };
        expect(verdict(arch, nr, args(0o4755)), call).toBe(SECCOMP_RET_EPERM);
        expect(verdict(arch, nr, args(0o2755)), call).toBe(SECCOMP_RET_EPERM);
        expect(verdict(arch, nr, args(0o755)), call).toBe(SECCOMP_RET_ALLOW);
        expect(verdict(arch, nr, args(0o1777)), call).toBe(SECCOMP_RET_ALLOW);
        // O_TMPFILE also uses the mode; a plain open ignores it.
        if (check.flags !== undefined) {
          expect(verdict(arch, nr, args(0o4755, 0o20200000)), call).toBe(SECCOMP_RET_EPERM);
          expect(verdict(arch, nr, args(0o4755, 0o2)), call).toBe(SECCOMP_RET_ALLOW);
        }
      }
    });
  }

  it('matches its specification for any call, mode and flags (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...tables),
        fc.integer({ min: 0, max: 500 }),
        fc.array(fc.integer({ min: 0, max: 0xffffffff }), { minLength: 6, maxLength: 6 }),
        ([, arch, table], nr, args) => {
          const name = Object.keys(table).find((call) => table[call] === nr);
          let expected = SECCOMP_RET_ALLOW;
          if (name && (DENIED_SYSCALLS as readonly string[]).includes(name))
            expected = SECCOMP_RET_EPERM;
          const check = name ? MODE_SYSCALLS[name] : undefined;
          if (check) {
            const creating = check.flags === undefined || (args[check.flags]! & 0o20000100) !== 0;
            if (creating && (args[check.mode]! & 0o6000) !== 0) expected = SECCOMP_RET_EPERM;
          }
          expect(verdict(arch, nr, args)).toBe(expected);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
