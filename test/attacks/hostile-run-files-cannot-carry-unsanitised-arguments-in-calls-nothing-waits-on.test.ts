// Adversary 8 (a hostile portable run file). `sanitizeCarriedMessages` passes the arguments of
// every *answered* tool call through the output sanitiser and keeps the arguments of calls
// "still waiting for their result" as written, since they are the proposal the target's
// policy and approvals judge (README "Portable runs"). "Waiting" is decided as "no tool
// message answers this id", so a file can put an unanswered call anywhere in the history — in
// an assistant message followed by more turns, in a run that waits on nothing — and its
// arguments reach the thread verbatim: a ChatML system turn, zero-width and bidi characters,
// with no finding in `sanitisedMessages` and no `security_event`. No node will ever run such a
// call (a tool node runs the calls of the last assistant message only), so nothing judges it;
// the model is shown it as history on the next turn wherever the provider or chat template
// renders calls without results.
//
// Fix (mechanism): exempt from the sanitiser only the calls the run really waits on — those of
// the last assistant message when `pending.next` will run them, or those named by a pending
// approval — and sanitise (or refuse, `import_invalid`) the arguments of every other
// unanswered call.
import { AIMessage, type BaseMessage, HumanMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { exportThread, importThread } from '../../src/adapters/index.js';
import { canonicalJson } from '../../src/audit/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { RUN_FILE_POISON, suspendedLookupGraph } from '../support/suspended-lookup-graph.js';

describe('an unanswered tool call in the middle of a carried history', () => {
  it('has its arguments sanitised, or the file is refused', async () => {
    const source = suspendedLookupGraph();
    await source.invoke(
      { messages: [new HumanMessage('look up 7')] },
      { configurable: { thread_id: 'stale' } },
    );
    const run = JSON.parse(canonicalJson(await exportThread(source, 'stale')));
    // Inserted before the run's own pending call (`call_1`, which stays last and waiting).
    run.messages.splice(
      1,
      0,
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'call_0', name: 'lookup', arguments: { id: RUN_FILE_POISON } }],
      },
      { role: 'user', content: 'thanks, and look up 7 again' },
    );
    const target = suspendedLookupGraph();
    const imported = await importThread(target, run, { importAudit: false }).catch(
      (error: unknown) => error,
    );
    if (VeridexError.is(imported, 'import_invalid')) return; // refused: secure
    if (imported instanceof Error) throw imported;
    const messages = (await target.getState({ configurable: { thread_id: 'stale' } })).values
      .messages as BaseMessage[];
    const stale = messages.find(
      (message) => message instanceof AIMessage && message.tool_calls?.[0]?.id === 'call_0',
    ) as AIMessage;
    const args = JSON.stringify(stale.tool_calls![0]!.args);
    expect(args).not.toContain('<|im_start|>');
    expect(args).not.toContain('[INST]');
    for (const hidden of ['\u200b', '\u200d', '\u202e', '\u2066'])
      expect(args).not.toContain(hidden);
    // The run's own waiting call keeps its proposal as written (control).
    const waiting = messages.at(-1) as AIMessage;
    expect(waiting.tool_calls?.[0]).toMatchObject({ id: 'call_1', args: { id: '7' } });
  });
});
