// Adversary 8 (a hostile portable run file): text the file carries toward the model outside the
// `text` of a tool message. The README promises carried tool results pass the output sanitiser
// "as a fresh tool result would"; it admits only system and user messages are imported as written.
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { exportThread, importThread } from '../../src/adapters/index.js';
import { canonicalJson } from '../../src/audit/index.js';
import { RUN_FILE_POISON, suspendedLookupGraph } from '../support/suspended-lookup-graph.js';

const buildGraph = suspendedLookupGraph;

const POISON = RUN_FILE_POISON;

async function importWith(extra: unknown[]): Promise<BaseMessage[]> {
  const source = buildGraph();
  await source.invoke(
    { messages: [new HumanMessage('look up 7')] },
    { configurable: { thread_id: 'hostile' } },
  );
  const run = JSON.parse(canonicalJson(await exportThread(source, 'hostile')));
  run.messages.splice(1, 0, ...extra);
  const target = buildGraph();
  await importThread(target, run, { importAudit: false });
  return (await target.getState({ configurable: { thread_id: 'hostile' } })).values
    .messages as BaseMessage[];
}

function expectClean(message: BaseMessage | undefined) {
  expect(message).toBeDefined();
  const text = JSON.stringify(message!.content);
  expect(text).not.toContain('<|im_start|>');
  expect(text).not.toContain('[INST]');
  for (const hidden of ['\u200b', '\u202e', '\u2066']) {
    expect(text).not.toContain(JSON.stringify(hidden).slice(1, -1));
    expect(text).not.toContain(hidden);
  }
}

describe('importThread with a hostile run file', () => {
  it('sanitises a carried tool result held in a non-text content part (an Anthropic-style document block)', async () => {
    const messages = await importWith([
      { role: 'assistant', content: '', toolCalls: [{ id: 'c0', name: 'lookup', arguments: {} }] },
      {
        role: 'tool',
        toolCallId: 'c0',
        content: [
          { type: 'text', text: 'ok' },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: POISON } },
        ],
      },
    ]);
    expectClean(messages.find((message) => message instanceof ToolMessage));
  });

  it('sanitises role tokens and hidden characters in a carried assistant message', async () => {
    const messages = await importWith([{ role: 'assistant', content: POISON }]);
    expectClean(
      messages.find(
        (message) => message instanceof AIMessage && JSON.stringify(message.content).includes('ok'),
      ),
    );
  });
});
