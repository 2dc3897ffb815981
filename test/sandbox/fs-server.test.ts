import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duplex, PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeFrame, FrameReader, type FsReply } from '../../src/sandbox/fs-channel.js';
import { serveJailedFs } from '../../src/sandbox/fs-server.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'veridex-fs-server-')));
const FILE_BYTES = 256 * 1024;
const content = Buffer.alloc(FILE_BYTES, 7);
writeFileSync(join(root, 'big.bin'), content);
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The parent's end of a channel whose child writes into `requests` and reads `replies`. */
function channelPair() {
  const requests = new PassThrough();
  const replies = new PassThrough({ highWaterMark: 1024 });
  const channel = Duplex.from({ readable: requests, writable: replies });
  return { channel, requests, replies };
}

describe('serveJailedFs', () => {
  it('holds at most one answer for a child that floods reads and never takes the answers', async () => {
    const { channel, requests, replies } = channelPair();
    const stop = serveJailedFs(channel, root, () => undefined);
    const COUNT = 20;
    requests.write(
      Buffer.concat(
        Array.from({ length: COUNT }, (_, id) =>
          encodeFrame({ id, op: 'readFile', path: 'big.bin' }),
        ),
      ),
    );
    // Served all at once, 20 answers of ~350 KB would pile up in this process. Watch the
    // bytes buffered towards the child for half a second. The one answer written is counted
    // twice (still pending in the channel, already in the pipe), so the bound is three.
    const answer = Math.ceil((FILE_BYTES * 4) / 3);
    const buffered = () => channel.writableLength + replies.readableLength;
    let most = 0;
    for (let waited = 0; waited < 500; waited += 20) {
      most = Math.max(most, buffered());
      if (most >= 3 * answer) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThan(3 * answer);

    // Once the child reads, every request is answered, in order.
    const reader = new FrameReader();
    const answers: FsReply[] = [];
    await new Promise<void>((resolve) => {
      replies.on('data', (chunk: Buffer) => {
        answers.push(...(reader.push(chunk) as FsReply[]));
        if (answers.length === COUNT) resolve();
      });
    });
    expect(answers.map((reply) => reply.id)).toEqual(Array.from({ length: COUNT }, (_, id) => id));
    for (const reply of answers) {
      expect(reply.ok && Buffer.from(reply.data ?? '', 'base64').equals(content)).toBe(true);
    }
    stop();
  });
});
