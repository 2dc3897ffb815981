import { expect, it } from 'vitest';
import { z } from 'zod';
import { runTool } from '../../src/governance/index.js';
import { tool } from '../../src/tools/index.js';

/** A note-taking tool bound to its own store, as two agents in one process would each have. */
function notesTool(store: string[]) {
  return tool({
    name: 'take_note',
    description: 'Store a note.',
    safetyClass: 'write',
    idempotency: 'required',
    input: z.object({ text: z.string() }),
    output: z.object({ stored: z.number() }),
    async execute({ input }) {
      store.push(input.text);
      return { stored: store.length };
    },
  });
}

const scripted = { threadId: 'thread-1', toolCallId: 'call_0' };

it('runs a call once per tool instance when no database is configured', async () => {
  const notes: string[] = [];
  const take = notesTool(notes);
  const first = await runTool(take, { text: 'window seat' }, scripted);
  const again = await runTool(take, { text: 'window seat' }, scripted);
  expect([first.status, again.status]).toEqual(['success', 'success']);
  expect(again).toMatchObject({ replayed: true });
  expect(notes).toEqual(['window seat']);
});

it('does not answer another tool instance’s call from this one’s ledger', async () => {
  // Two agents in one process, each with its own store, both on thread "thread-1" with a
  // scripted model's "call_0": the second must write to its own store, not replay the first.
  const first: string[] = [];
  const second: string[] = [];
  await runTool(notesTool(first), { text: 'window seat' }, scripted);
  const outcome = await runTool(notesTool(second), { text: 'window seat' }, scripted);
  expect(outcome).toMatchObject({ status: 'success' });
  expect(outcome).not.toMatchObject({ replayed: true });
  expect([first, second]).toEqual([['window seat'], ['window seat']]);
});
