import { createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { postgresUrl } from '../support/databases.js';

// Found by `npm run soak`: pg_terminate_backend hitting a connection while a transaction was
// between two statements crashed the worker process (node-postgres emits 'error' on a client
// with no query running, and a checked-out client has no listener). The transaction must fail
// with db_unavailable instead, and the handle keep working.
describe.runIf(postgresUrl)(
  'Database on PostgreSQL when the connection dies mid-transaction',
  () => {
    it('fails the transaction with db_unavailable instead of crashing the process', async () => {
      const db = await createDatabase({ url: postgresUrl!, maxConnections: 1 });
      const killer = await createDatabase({ url: postgresUrl!, maxConnections: 1 });
      try {
        const outcome = db
          .transaction(async (tx) => {
            const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
            const pid = rows[0]!.pid;
            await killer.query('SELECT pg_terminate_backend($1)', [pid]);
            // Until the backend is gone its termination notice is on the wire to this idle
            // client; a few round trips later the event loop has delivered it.
            for (let round = 0; round < 200; round++) {
              const alive = await killer.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [
                pid,
              ]);
              if (alive.rows.length === 0) break;
            }
            await killer.query('SELECT 1');
            await tx.query('SELECT 1');
          })
          .catch((caught: unknown) => caught);
        const error = await outcome;
        expect(VeridexError.is(error, 'db_unavailable'), String(error)).toBe(true);
        const after = await db.query<{ one: number }>('SELECT 1 AS one');
        expect(after.rows[0]?.one).toBe(1);
      } finally {
        await killer.close();
        await db.close();
      }
    });
  },
);

// The server's side of the PostgreSQL wire protocol, as much as one simple query needs.
const message = (type: string, body: Buffer) => {
  const head = Buffer.alloc(5);
  head.write(type, 0);
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
};
const int32 = (value: number) => {
  const buffer = Buffer.alloc(4);
  buffer.writeInt32BE(value);
  return buffer;
};
const AUTH_OK = message('R', int32(0));
const READY = message('Z', Buffer.from('I'));
const DONE = message('C', Buffer.from('SELECT 0\0'));
const TERMINATED = message(
  'E',
  Buffer.from('SFATAL\0VFATAL\0C57P01\0Mterminating connection due to administrator command\0\0'),
);

/**
 * A loopback server that answers every simple query, except that on its first connection the
 * answer to the first query is followed — in the same TCP segment — by a FATAL termination
 * notice, as a server shutting down sends it right after a statement completed.
 */
async function terminatingServer(): Promise<{ url: string; close(): Promise<void> }> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    const first = connections++ === 0;
    let started = false;
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        if (!started) {
          if (buffered.length < 4) return;
          const length = buffered.readInt32BE(0);
          if (buffered.length < length) return;
          buffered = buffered.subarray(length);
          started = true;
          socket.write(Buffer.concat([AUTH_OK, READY]));
          continue;
        }
        if (buffered.length < 5) return;
        const type = String.fromCharCode(buffered[0]!);
        const length = buffered.readInt32BE(1);
        if (buffered.length < length + 1) return;
        buffered = buffered.subarray(length + 1);
        if (type === 'X') return void socket.end();
        if (type !== 'Q') continue;
        if (first) {
          socket.end(Buffer.concat([DONE, READY, TERMINATED]));
          return;
        }
        socket.write(Buffer.concat([DONE, READY]));
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `postgres://soak@127.0.0.1:${port}/wire`,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('Database when the server ends a connection right after a statement completed', () => {
  it('does not crash the process handing that connection to a waiting transaction', async () => {
    const server = await terminatingServer();
    const db = await createDatabase({ url: server.url, maxConnections: 1 });
    try {
      // The one connection answers the query and dies in the same segment; the pool has
      // already given it to the transaction waiting for a connection.
      const query = db.query('SELECT 1');
      const transaction = db
        .transaction((tx) => tx.query('SELECT 2'))
        .then(
          () => 'committed',
          (error: unknown) => error,
        );
      await query;
      const outcome = await transaction;
      expect(VeridexError.is(outcome, 'db_unavailable'), String(outcome)).toBe(true);
      // A fresh connection serves the next statement.
      await db.query('SELECT 3');
    } finally {
      await db.close();
      await server.close();
    }
  });
});
