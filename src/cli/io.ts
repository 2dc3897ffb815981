/** Where a CLI command writes. Injected so tests and embedders can capture output. */
export interface CliIo {
  out(line?: string): void;
  err(line?: string): void;
}

/** The process's stdout/stderr. */
export const processIo: CliIo = {
  out: (line = '') => process.stdout.write(`${line}\n`),
  err: (line = '') => process.stderr.write(`${line}\n`),
};

/** Exit codes shared by every command. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** A usage mistake: printed with the command's help, exit code 2. */
export class UsageError extends Error {}
