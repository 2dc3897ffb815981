import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeFrame, FrameReader, type FsReply } from '../../src/sandbox/fs-channel.js';

const reply = fc.record({
  id: fc.nat(),
  ok: fc.constant(true as const),
  data: fc.base64String({ maxLength: 200 }),
  names: fc.array(fc.string({ unit: 'grapheme' }), { maxLength: 5 }),
}) as fc.Arbitrary<FsReply>;

describe('the jailed fs channel frames', () => {
  it('reads back every frame however the stream is cut into chunks (property)', () => {
    fc.assert(
      fc.property(
        fc.array(reply, { maxLength: 8 }),
        fc.array(fc.nat({ max: 64 })),
        (messages, cuts) => {
          const stream = Buffer.concat(messages.map((message) => encodeFrame(message)));
          const reader = new FrameReader();
          const read: unknown[] = [];
          let at = 0;
          for (const cut of cuts) {
            const end = Math.min(stream.length, at + cut);
            read.push(...reader.push(stream.subarray(at, end)));
            at = end;
          }
          read.push(...reader.push(stream.subarray(at)));
          expect(read).toEqual(messages);
        },
      ),
    );
  });

  it('refuses a frame that announces more than its limit before reading it', () => {
    const reader = new FrameReader(1_024);
    const head = Buffer.alloc(4);
    head.writeUInt32BE(1_025);
    expect(() => reader.push(head)).toThrow(/exceeds the 1024-byte limit/);
  });

  it('refuses a frame that is not JSON', () => {
    const reader = new FrameReader();
    expect(() =>
      reader.push(Buffer.concat([Buffer.from([0, 0, 0, 3]), Buffer.from('{{{')])),
    ).toThrow(SyntaxError);
  });
});
