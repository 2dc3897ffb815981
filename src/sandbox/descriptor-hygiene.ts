// Descriptor hygiene of an IsolatedProcessSandbox child (README "Sandboxes"). A process keeps,
// across exec, every descriptor not marked close-on-exec; bubblewrap closes none, and Node marks
// inherited ones only up to the first gap in their numbers. So a file the agent itself inherited
// at fd 40 (a supervisor's, a shell's `40<file`) would reach the tool at /proc/self/fd/40.
import fs from 'node:fs';

// Captured when this module is evaluated, before any tool code: a tool module's top-level code
// runs in the same heap when the startup snapshot is built, and could replace `fs.readdirSync`
// or an intrinsic (`Array.prototype.includes`, `RegExp.prototype.exec`) to blind this check in
// every child started from that snapshot. Nothing below looks one up again at run time.
const readdirSync = fs.readdirSync;
const readFileSync = fs.readFileSync;
const closeSync = fs.closeSync;
const apply = Reflect.apply;
const indexOf = String.prototype.indexOf;
const slice = String.prototype.slice;
const parseInteger = Number.parseInt;
const toNumber = Number;
const notANumber = Number.isNaN;

const O_CLOEXEC = 0o2000000;

/**
 * Closes every descriptor this process inherited across exec, except `keep` (stdin, stdout,
 * stderr, the result channel). Inherited ones are exactly those without close-on-exec — any
 * with it was closed by exec — while every descriptor Node and libuv open for themselves
 * (epoll, eventfds, signal pipes) carries it, so they stay. Returns the descriptors closed.
 * Runs before any tool code: first in the child's bundle, and before the call in a snapshot.
 */
export function closeInheritedDescriptors(keep: readonly number[] = [0, 1, 2, 3]): number[] {
  const closed: number[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    return closed; // no /proc: not an IsolatedProcessSandbox child
  }
  for (let index = 0; index < names.length; index++) {
    const fd = toNumber(names[index]);
    let kept = false;
    for (let at = 0; at < keep.length; at++) if (keep[at] === fd) kept = true;
    if (kept) continue;
    let flags: number;
    try {
      flags = fdFlags(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
    } catch {
      continue; // already gone (the directory listing's own descriptor)
    }
    if ((flags & O_CLOEXEC) !== 0) continue;
    try {
      closeSync(fd);
      closed[closed.length] = fd;
    } catch {
      // closed meanwhile
    }
  }
  return closed;
}

/** The octal `flags:` field of a `/proc/self/fdinfo/<fd>` text (0 when absent). */
function fdFlags(info: string): number {
  const start = apply(indexOf, info, ['flags:']) as number;
  if (start < 0) return 0;
  const end = apply(indexOf, info, ['\n', start]) as number;
  const field = apply(slice, info, [start + 6, end < 0 ? info.length : end]) as string;
  const flags = parseInteger(field, 8);
  return notANumber(flags) ? 0 : flags;
}
