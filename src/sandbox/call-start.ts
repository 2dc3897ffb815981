import fs from 'node:fs';

/**
 * The byte a parent writes to an isolated child's stdin when a call starts, before the request.
 * A child started ahead of time (`prewarm`) blocks on it before any tool code runs, so the tool
 * runs only inside a call: under its timeout, its watchdog and after the jail was swept.
 */
export const CALL_START = Buffer.from([0x47]);
const START_BYTE = 0x47;

// Captured when this module is evaluated, before any tool code (see descriptor-hygiene.ts): a
// tool that replaces `fs.readSync` while its snapshot is built must not answer the gate itself.
const readSync = fs.readSync;
const Bytes = Uint8Array;
// Exits at once: no 'exit' listener (a tool's, registered while its snapshot was built) runs.
const reallyExit = (process as unknown as { reallyExit?: (code: number) => never }).reallyExit;
const exit = process.exit;
const apply = Reflect.apply;

/**
 * Blocks until the call-start byte arrives on stdin (fd 0). Any other byte, or end of input,
 * means the parent is not driving a call: the child exits without running tool code.
 */
export function awaitCallStart(): void {
  const byte = new Bytes(1);
  for (;;) {
    let read: number;
    try {
      read = readSync(0, byte, 0, 1, null);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') {
        // A non-blocking pipe: wait without spinning. (Looked up here: a snapshot being built
        // has no Atomics; a replaced one could only change how long this waits.)
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
        continue;
      }
      if (code === 'EOF') read = 0;
      else throw error;
    }
    if (read === 1 && byte[0] === START_BYTE) return;
    if (typeof reallyExit === 'function') apply(reallyExit, process, [125]);
    apply(exit, process, [125]);
  }
}
