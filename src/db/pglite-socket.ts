import { chmodSync, lstatSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join, resolve } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { VeridexError } from '../errors/index.js';
import type { SessionGate } from './session-gate.js';

/**
 * How an on-disk PGlite database is offered to other processes: `true` or `{ path }` for a
 * Unix socket in a directory only you can enter (default `<dataDir>.socket/`),
 * `{ host: '127.0.0.1', port }` for loopback TCP (port 0 or absent: any free port).
 */
export type ExposeOption =
  | true
  | { path?: string }
  | { host: '127.0.0.1' | '::1' | 'localhost'; port?: number };

/** A running exposure: the URL other processes connect to, and how to stop it. */
export interface ExposedPglite {
  readonly url: string;
  close(): Promise<void>;
}

// The file name node-postgres (like libpq) looks for inside a socket directory.
const SOCKET_FILE = '.s.PGSQL.5432';
// Messages after which a client's batch is complete: Sync, simple Query, Terminate.
const BATCH_ENDS = new Set([0x53, 0x51, 0x58]);
const SYNC_MESSAGE = new Uint8Array([0x53, 0, 0, 0, 4]);
// A client silent this long inside the session is disconnected (its transaction rolled back),
// so a frozen `veridex` process cannot stall the application for good.
const IDLE_TIMEOUT_MS = 60_000;

// The part of @electric-sql/pglite-socket used here, typed locally so that the package (an
// optional peer) is needed only by those who expose a database.
interface SocketHandler {
  attach(socket: Socket): Promise<unknown>;
}
type SocketHandlerClass = new (options: {
  queryQueue: unknown;
  closeOnDetach?: boolean;
  idleTimeout?: number;
}) => SocketHandler;

/**
 * Serves `instance` on a local socket with `@electric-sql/pglite-socket`'s protocol handler.
 * Every client message passes through `gate`, so a client's transaction or statement batch
 * never interleaves with the holder's own checkouts (which take the same gate).
 *
 * @throws VeridexError `config_invalid` when the optional peer is missing or the socket cannot be opened.
 */
export async function exposePglite(
  instance: PGlite,
  gate: SessionGate,
  option: ExposeOption,
  dataDir: string,
): Promise<ExposedPglite> {
  let Handler: SocketHandlerClass;
  try {
    ({ PGLiteSocketHandler: Handler } = (await import('@electric-sql/pglite-socket' as string)) as {
      PGLiteSocketHandler: SocketHandlerClass;
    });
  } catch (error) {
    throw new VeridexError(
      'config_invalid',
      'createDatabase({ expose }) needs the optional package @electric-sql/pglite-socket: npm install @electric-sql/pglite-socket (the version matching your @electric-sql/pglite).',
      { cause: error },
    );
  }
  const queue = new GatedQueue(instance, gate);
  const server = createServer((socket) => {
    const handler = new Handler({
      queryQueue: queue,
      closeOnDetach: true,
      idleTimeout: IDLE_TIMEOUT_MS,
    });
    handler.attach(socket).catch(() => socket.destroy());
  });
  const tcp = option !== true && 'host' in option ? option : undefined;
  if (tcp) {
    await listen(server, () => server.listen(tcp.port ?? 0, tcp.host));
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : tcp.port;
    const host = tcp.host === '::1' ? '[::1]' : tcp.host;
    return closable(server, `postgres://postgres@${host}:${port}/postgres`);
  }
  const chosen = option !== true && 'path' in option ? option.path : undefined;
  const directory = resolve(chosen ?? `${resolve(dataDir)}.socket`);
  privateDirectory(directory);
  const file = join(directory, SOCKET_FILE);
  // We hold the data directory's lock, so a socket file left here is a dead holder's.
  rmSync(file, { force: true });
  if (Buffer.byteLength(file) > 100) {
    throw new VeridexError(
      'config_invalid',
      `The socket path ${file} is too long for a Unix socket (about 100 bytes at most); pass expose: { path: '/a/shorter/dir' }.`,
    );
  }
  await listen(server, () => server.listen(file));
  return closable(
    server,
    `postgres://postgres@localhost/postgres?host=${encodeURIComponent(directory)}`,
    () => rmSync(file, { force: true }),
  );
}

/** A socket directory only this user can enter; a planted symlink or someone else's directory is refused. */
function privateDirectory(directory: string): void {
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const stat = lstatSync(directory);
  const mine = typeof process.getuid !== 'function' || stat.uid === process.getuid();
  if (!stat.isDirectory() || !mine) {
    throw new VeridexError(
      'config_invalid',
      `The socket directory ${directory} is not a directory of yours; remove it or pass expose: { path } to another one.`,
    );
  }
  chmodSync(directory, 0o700);
}

function listen(server: Server, start: () => void): Promise<void> {
  return new Promise((done, fail) => {
    server.once('error', (error) => {
      fail(
        new VeridexError(
          'config_invalid',
          `Could not open the socket for expose: ${error.message}.`,
          { cause: error },
        ),
      );
    });
    server.once('listening', () => done());
    start();
  });
}

function closable(server: Server, url: string, cleanup?: () => void): ExposedPglite {
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  // An exposure must not keep a finished script alive on its own.
  server.unref();
  return {
    url,
    close: () =>
      new Promise<void>((done) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => {
          cleanup?.();
          done();
        });
      }),
  };
}

/**
 * The queue `PGLiteSocketHandler` hands client messages to (its `queryQueue` contract:
 * `enqueue`, `clearQueueForHandler`, `clearTransactionIfNeeded`). Messages of one client run
 * in order; a client holds the session gate from its first message until its batch is complete
 * and no transaction is open, so the holder's statements never land inside its transaction
 * and the other way round.
 */
class GatedQueue {
  readonly #chains = new Map<number, Promise<unknown>>();
  readonly #midBatch = new Set<number>();
  readonly #gone = new Set<number>();

  constructor(
    private readonly db: PGlite,
    private readonly gate: SessionGate,
  ) {}

  enqueue(
    handlerId: number,
    message: Uint8Array,
    onData: (data: Uint8Array) => void,
  ): Promise<number> {
    const previous = this.#chains.get(handlerId) ?? Promise.resolve();
    const run = previous.catch(() => undefined).then(() => this.#run(handlerId, message, onData));
    this.#chains.set(handlerId, run);
    return run;
  }

  clearQueueForHandler(handlerId: number): void {
    this.#gone.add(handlerId);
  }

  async clearTransactionIfNeeded(handlerId: number): Promise<void> {
    this.#gone.add(handlerId);
    await this.#chains.get(handlerId)?.catch(() => undefined);
    this.#chains.delete(handlerId);
    const owner = ownerOf(handlerId);
    if (!this.gate.holds(owner)) return;
    try {
      // Close an unfinished batch, undo an open transaction, forget its named statements.
      if (this.#midBatch.delete(handlerId)) {
        await this.db.execProtocolRawStream(SYNC_MESSAGE, { onRawData: () => undefined });
      }
      if (this.db.isInTransaction()) await this.db.exec('ROLLBACK');
      await this.db.exec('DEALLOCATE ALL');
    } finally {
      this.gate.release(owner);
    }
  }

  async #run(
    handlerId: number,
    message: Uint8Array,
    onData: (data: Uint8Array) => void,
  ): Promise<number> {
    if (this.#gone.has(handlerId)) throw new Error('Handler disconnected');
    const owner = ownerOf(handlerId);
    await this.gate.acquire(owner);
    if (this.#gone.has(handlerId)) {
      this.gate.release(owner);
      throw new Error('Handler disconnected');
    }
    this.gate.markForeignUse();
    let bytes = 0;
    await this.db.execProtocolRawStream(message, {
      onRawData: (data) => {
        bytes += data.length;
        onData(data);
      },
    });
    // A start-up packet begins with its length, whose first byte is 0.
    const complete = message[0] === 0 || BATCH_ENDS.has(message[0]!);
    if (complete) this.#midBatch.delete(handlerId);
    else this.#midBatch.add(handlerId);
    if (complete && !this.db.isInTransaction()) this.gate.release(owner);
    return bytes;
  }
}

function ownerOf(handlerId: number): string {
  return `socket:${handlerId}`;
}
