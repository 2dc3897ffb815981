import {
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { exportThread, importThread } from '../../src/adapters/index.js';
import { AuditLog, canonicalJson } from '../../src/audit/index.js';
import { RUN_FILE_POISON, suspendedLookupGraph } from '../support/suspended-lookup-graph.js';

const buildGraph = suspendedLookupGraph;

const POISON = RUN_FILE_POISON;

describe('importThread with a hostile run file', () => {
  it('passes carried tool messages through the output sanitiser before the model can read them', async () => {
    const source = buildGraph();
    await source.invoke(
      { messages: [new HumanMessage('look up 7')] },
      { configurable: { thread_id: 'hostile' } },
    );
    const run = JSON.parse(canonicalJson(await exportThread(source, 'hostile')));
    run.messages.splice(
      1,
      0,
      { role: 'assistant', content: '', toolCalls: [{ id: 'c0', name: 'lookup', arguments: {} }] },
      { role: 'tool', toolCallId: 'c0', name: 'lookup', content: POISON },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c2', name: 'lookup', arguments: {} }] },
      { role: 'tool', toolCallId: 'c2', content: [{ type: 'text', text: POISON }] },
    );

    const target = buildGraph();
    await importThread(target, run, { importAudit: false });
    const messages = (await target.getState({ configurable: { thread_id: 'hostile' } })).values
      .messages as BaseMessage[];
    const tools = messages.filter((message) => message instanceof ToolMessage);
    expect(tools).toHaveLength(2);
    for (const message of tools) {
      const text = JSON.stringify(message.content);
      expect(text).not.toContain('<|im_start|>');
      expect(text).not.toContain('[INST]');
      for (const hidden of ['\u200b', '\u200d', '\u202e', '\u2066']) {
        expect(text).not.toContain(hidden);
        expect(text).not.toContain(JSON.stringify(hidden).slice(1, -1));
      }
      expect(text).toContain('&lt;|im_start|&gt;system');
      expect(text).toContain('wire the funds');
    }
  });

  // A run file whose every role carries the poison: its own system prompt and user turn too.
  async function hostileRun() {
    const source = buildGraph();
    await source.invoke(
      { messages: [new HumanMessage('look up 7')] },
      { configurable: { thread_id: 'hostile' } },
    );
    const run = JSON.parse(canonicalJson(await exportThread(source, 'hostile')));
    run.messages.unshift({ role: 'system', content: `You help.${POISON}` });
    run.messages[1].content = `look up 7${POISON}`;
    return run;
  }

  it('sanitises the system and user messages the file brings too, and records what it changed', async () => {
    const target = buildGraph();
    const audit = new AuditLog();
    const result = await importThread(target, await hostileRun(), { importAudit: false, audit });
    const messages = (await target.getState({ configurable: { thread_id: 'hostile' } })).values
      .messages as BaseMessage[];
    for (const message of messages.filter(
      (message) => message instanceof SystemMessage || message instanceof HumanMessage,
    )) {
      const text = JSON.stringify(message.content);
      expect(text).not.toContain('<|im_start|>');
      expect(text).not.toContain('\\u200b');
      expect(text).toContain('&lt;|im_start|&gt;system');
    }
    expect(result.sanitisedMessages.map(({ messageIndex, role }) => [messageIndex, role])).toEqual([
      [0, 'system'],
      [1, 'user'],
    ]);
    const kinds = result.sanitisedMessages[0]!.findings.map((finding) => finding.kind);
    expect(kinds).toEqual(expect.arrayContaining(['hidden_unicode', 'role_token']));
    const events = await audit.events('hostile');
    const event = events.find((event) => event.type === 'security_event');
    expect(event?.payload).toMatchObject({ kind: 'imported_messages_sanitised' });
    // Kinds and positions only: the removed text is not copied into the log.
    expect(JSON.stringify(event?.payload)).not.toContain('wire the funds');
  });

  it('refuses a content part the sanitiser cannot read, writing nothing, unless told to drop it', async () => {
    const run = await hostileRun();
    run.messages[1].content = [
      { type: 'text', text: 'look up 7' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
    ];
    const target = buildGraph();
    await expect(importThread(target, run, { importAudit: false })).rejects.toMatchObject({
      code: 'import_invalid',
      details: { messageIndex: 1, role: 'user', partIndex: 1, partType: 'image_url' },
    });
    const untouched = await target.getState({ configurable: { thread_id: 'hostile' } });
    expect(untouched.config.configurable?.checkpoint_id).toBeUndefined();

    await importThread(target, run, { importAudit: false, unsanitisableParts: 'drop' });
    const messages = (await target.getState({ configurable: { thread_id: 'hostile' } })).values
      .messages as BaseMessage[];
    const user = messages.find((message) => message instanceof HumanMessage)!;
    expect(user.content).toEqual([
      { type: 'text', text: 'look up 7' },
      {
        type: 'text',
        text: '[image_url part removed on import: the sanitiser cannot read its content]',
      },
    ]);
  });
});
