// Descriptor hygiene of an IsolatedProcessSandbox child (README "Sandboxes"). A process keeps,
// across exec, every descriptor not marked close-on-exec; bubblewrap closes none, and Node marks
// inherited ones only up to the first gap in their numbers. So a file the agent itself inherited
// at fd 40 (a supervisor's, a shell's `40<file`) would reach the tool at /proc/self/fd/40.
import { closeSync, readdirSync, readFileSync } from 'node:fs';

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
  for (const name of names) {
    const fd = Number(name);
    if (keep.includes(fd)) continue;
    let flags: number;
    try {
      const info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
      flags = Number.parseInt(/^flags:\s*([0-7]+)$/m.exec(info)?.[1] ?? '0', 8);
    } catch {
      continue; // already gone (the directory listing's own descriptor)
    }
    if ((flags & O_CLOEXEC) !== 0) continue;
    try {
      closeSync(fd);
      closed.push(fd);
    } catch {
      // closed meanwhile
    }
  }
  return closed;
}
