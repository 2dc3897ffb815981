import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fstatSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { VeridexError } from '../errors/index.js';

/** What a lock file says about the process holding a PGlite data directory. */
export interface PgliteLockHolder {
  pid: number;
  host: string;
  /** When the holder took the lock (ISO time). */
  since: string;
  /** The holder's start time from /proc (Linux), so a reused pid is not mistaken for it. */
  processStart?: string;
  /** Where the holder serves the database to other processes, when it was opened with `expose`. */
  socket?: string;
  /** Unique per acquisition: release removes the file only while it is still this one. */
  token: string;
}

/** What a second opener finds. */
export type LockProbe =
  | { state: 'acquired'; lock: PgliteLock }
  | { state: 'held'; holder: PgliteLockHolder; lockFile: string };

/** The lock file of a data directory: a sibling, so PGlite's own directory stays untouched. */
export function lockFileOf(dataDir: string): string {
  return `${resolve(dataDir)}.lock`;
}

/**
 * An exclusive, cross-process lock on one PGlite data directory. PGlite is a single-process
 * database: two processes that open one directory both succeed and then silently see
 * different data, so whoever opens it first holds `<dataDir>.lock` until `release()` (or exit).
 *
 * The lock file is created atomically (`link`, which fails if the name exists). A lock whose
 * holder is gone (same host, pid not alive, or alive but started at another time) is stale and
 * is taken over, under a short-lived takeover guard so two openers cannot both replace it.
 */
export class PgliteLock {
  readonly lockFile: string;
  readonly holder: PgliteLockHolder;
  #released = false;
  readonly #onExit = () => this.release();

  private constructor(lockFile: string, holder: PgliteLockHolder) {
    this.lockFile = lockFile;
    this.holder = holder;
    process.once('exit', this.#onExit);
  }

  /**
   * Takes the lock of `dataDir`, or reports who holds it.
   *
   * @throws VeridexError `db_unavailable` when the lock file cannot be written.
   */
  static probe(dataDir: string): LockProbe {
    const lockFile = lockFileOf(dataDir);
    for (let attempt = 0; attempt < 5; attempt++) {
      const holder = newHolder();
      if (tryCreate(lockFile, holder)) {
        return { state: 'acquired', lock: new PgliteLock(lockFile, holder) };
      }
      const current = readHolder(lockFile);
      if (current === 'missing') continue;
      if (current !== 'unreadable' && isAlive(current)) {
        return { state: 'held', holder: current, lockFile };
      }
      removeStale(lockFile, current);
    }
    throw new VeridexError(
      'db_in_use',
      `Could not take the lock ${lockFile}: other processes keep replacing it. Make sure only one process opens this PGlite directory.`,
      { details: { lockFile } },
    );
  }

  /** Records in the lock file where other processes can reach the database (see `expose`). */
  advertise(socket: string): void {
    const next: PgliteLockHolder = { ...this.holder, socket };
    const temporary = `${this.lockFile}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(temporary, JSON.stringify(next), { mode: 0o600 });
    // rename replaces the file atomically: readers see the old or the new content, never half.
    renameSync(temporary, this.lockFile);
    Object.assign(this.holder, next);
  }

  /** Removes the lock file if it is still ours. Safe to call twice. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    process.removeListener('exit', this.#onExit);
    const current = readHolder(this.lockFile);
    if (typeof current === 'object' && current.token === this.holder.token) {
      try {
        unlinkSync(this.lockFile);
      } catch {
        // Already gone: nothing to release.
      }
    }
  }
}

/** The message of `db_in_use`: who holds the directory and the three ways forward. */
export function inUseError(
  dataDir: string,
  holder: PgliteLockHolder,
  lockFile: string,
): VeridexError {
  return new VeridexError(
    'db_in_use',
    `The PGlite database ${dataDir} is open in another process (pid ${holder.pid} on ${holder.host}, since ${holder.since}); PGlite allows one process per directory, and a second one would silently lose its writes. Either stop that process and retry, or let that process share it by opening it with createDatabase({ expose: true }) (the veridex command then connects through it), or use PostgreSQL for both (DATABASE_URL=postgres://…). If no such process exists, delete ${lockFile}.`,
    { details: { dataDir, lockFile, pid: holder.pid, host: holder.host, since: holder.since } },
  );
}

function newHolder(): PgliteLockHolder {
  const start = processStartOf(process.pid);
  return {
    pid: process.pid,
    host: hostname(),
    since: new Date().toISOString(),
    ...(start ? { processStart: start } : {}),
    token: randomBytes(12).toString('hex'),
  };
}

/** Creates `lockFile` with `holder` only if it does not exist (atomic on POSIX file systems). */
function tryCreate(lockFile: string, holder: PgliteLockHolder): boolean {
  const temporary = `${lockFile}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    writeFileSync(temporary, JSON.stringify(holder), { mode: 0o600 });
  } catch (error) {
    throw new VeridexError(
      'db_unavailable',
      `Cannot write the PGlite lock file ${lockFile}: ${(error as Error).message}. Check that the directory is writable.`,
      { cause: error, details: { lockFile } },
    );
  }
  try {
    linkSync(temporary, lockFile);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    unlinkSync(temporary);
  }
}

function readHolder(lockFile: string): PgliteLockHolder | 'missing' | 'unreadable' {
  let text: string;
  try {
    const descriptor = openSync(lockFile, 'r');
    try {
      // A lock file another local user planted is not trusted to name a socket or a holder.
      const owner = fstatSync(descriptor).uid;
      if (typeof process.getuid === 'function' && owner !== process.getuid()) {
        throw new VeridexError(
          'db_in_use',
          `The PGlite lock file ${lockFile} belongs to another user (uid ${owner}); it is not trusted. Remove it if you own this directory.`,
          { details: { lockFile, owner } },
        );
      }
      text = readFileSync(descriptor, 'utf8');
    } finally {
      closeSync(descriptor);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<PgliteLockHolder>;
    if (typeof parsed.pid !== 'number' || typeof parsed.host !== 'string') return 'unreadable';
    if (typeof parsed.token !== 'string' || typeof parsed.since !== 'string') return 'unreadable';
    if (parsed.socket !== undefined && typeof parsed.socket !== 'string') return 'unreadable';
    return parsed as PgliteLockHolder;
  } catch {
    return 'unreadable';
  }
}

/** Whether the holder may still be running. On another host we cannot tell: assume it is. */
function isAlive(holder: PgliteLockHolder): boolean {
  if (holder.host !== hostname()) return true;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: the pid exists but belongs to someone else — alive.
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  if (holder.processStart) {
    const start = processStartOf(holder.pid);
    if (start && start !== holder.processStart) return false;
  }
  return true;
}

/** Field 22 of /proc/<pid>/stat: the process start time in clock ticks since boot (Linux). */
function processStartOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19];
  } catch {
    return undefined;
  }
}

/**
 * Replaces a stale lock. Only the holder of `<lock>.takeover` may remove the lock file, and it
 * re-checks staleness while holding it, so a fresh lock another opener just created is never
 * removed. The guard lives for microseconds; a guard left by a crashed process is removed once
 * its own holder is gone.
 */
function removeStale(lockFile: string, seen: PgliteLockHolder | 'unreadable'): void {
  const guardFile = `${lockFile}.takeover`;
  const guard = newHolder();
  if (!tryCreate(guardFile, guard)) {
    const guardHolder = readHolder(guardFile);
    if (typeof guardHolder === 'object' && !isAlive(guardHolder)) {
      const aside = `${guardFile}.${guard.token}`;
      try {
        renameSync(guardFile, aside);
        unlinkSync(aside);
      } catch {
        // Someone else cleared it first.
      }
    }
    return;
  }
  try {
    const current = readHolder(lockFile);
    if (current === 'missing') return;
    const sameAsSeen =
      current === 'unreadable'
        ? seen === 'unreadable'
        : seen !== 'unreadable' && current.token === seen.token;
    // An unreadable file is only removed once it has sat there a while: it may be mid-write.
    if (sameAsSeen && (current === 'unreadable' ? olderThan(lockFile, 5_000) : !isAlive(current))) {
      unlinkSync(lockFile);
    }
  } finally {
    unlinkSync(guardFile);
  }
}

function olderThan(file: string, ms: number): boolean {
  try {
    return Date.now() - statSync(file).mtimeMs > ms;
  } catch {
    return false;
  }
}
