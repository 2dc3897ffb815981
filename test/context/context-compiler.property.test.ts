import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from '@langchain/core/messages';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContextCompiler, countTokens } from '../../src/context/index.js';
import { assertNoOrphans, filler } from './fixtures.js';

const turnArbitrary = fc.record({
  question: fc.integer({ min: 1, max: 60 }),
  rounds: fc.array(
    fc.record({
      calls: fc.integer({ min: 1, max: 3 }),
      outputWords: fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 300, max: 1_500 })),
    }),
    { maxLength: 3 },
  ),
  answer: fc.integer({ min: 0, max: 50 }),
  strayToolMessage: fc.boolean(),
  strayAtEnd: fc.boolean(),
});

const scenarioArbitrary = fc.record({
  turns: fc.array(turnArbitrary, { minLength: 1, maxLength: 40 }),
  contextLimit: fc.integer({ min: 3_000, max: 20_000 }),
  systemWords: fc.integer({ min: 0, max: 200 }),
  memories: fc.array(
    fc.record({
      words: fc.integer({ min: 1, max: 80 }),
      score: fc.double({ min: 0, max: 1, noNaN: true }),
    }),
    { maxLength: 6 },
  ),
  endsWithToolResult: fc.boolean(),
});

function buildHistory(
  turns: Array<typeof turnArbitrary extends fc.Arbitrary<infer Turn> ? Turn : never>,
  endsWithToolResult: boolean,
): BaseMessage[] {
  const history: BaseMessage[] = [];
  turns.forEach((turn, turnIndex) => {
    history.push(new HumanMessage(`Q${turnIndex}: ${filler(turn.question, turnIndex)}`));
    if (turn.strayToolMessage)
      history.push(new ToolMessage({ content: 'stray', tool_call_id: `stray_${turnIndex}` }));
    turn.rounds.forEach((round, roundIndex) => {
      const ids = Array.from(
        { length: round.calls },
        (_, call) => `c_${turnIndex}_${roundIndex}_${call}`,
      );
      history.push(
        new AIMessage({
          content: '',
          tool_calls: ids.map((id) => ({ id, name: 'lookup', args: { id } })),
        }),
      );
      for (const id of ids) {
        history.push(
          new ToolMessage({
            content: filler(round.outputWords, turnIndex * 13 + roundIndex),
            tool_call_id: id,
            name: 'lookup',
          }),
        );
      }
    });
    const last = turnIndex === turns.length - 1;
    if (!(last && endsWithToolResult && turn.rounds.length > 0))
      history.push(new AIMessage(filler(turn.answer, turnIndex + 500)));
    if (turn.strayAtEnd)
      history.push(new ToolMessage({ content: 'late', tool_call_id: `late_${turnIndex}` }));
  });
  return history;
}

describe('ContextCompiler properties', () => {
  it('never exceeds V_e, never orphans a tool message, and always keeps the system prompt and the last user message', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArbitrary, async (scenario) => {
        const compiler = new ContextCompiler({
          model: 'gpt-4o',
          contextLimit: scenario.contextLimit,
        });
        const history = buildHistory(scenario.turns, scenario.endsWithToolResult);
        const system =
          scenario.systemWords > 0 ? `SYSTEM ${filler(scenario.systemWords, 99)}` : undefined;
        const memories = scenario.memories.map((memory, index) => ({
          content: filler(memory.words, index + 77),
          score: memory.score,
        }));
        const { messages, report } = await compiler.compile({
          history,
          memories,
          ...(system ? { system } : {}),
        });

        const total = countTokens(messages);
        expect(total).toBeLessThanOrEqual(compiler.effectiveWindow - compiler.budgets.headroom);
        expect(total).toBeLessThanOrEqual(compiler.effectiveWindow);
        expect(report.tokens.total).toBe(total);

        const body = messages[0] instanceof SystemMessage ? messages.slice(1) : messages;
        if (system) expect((messages[0]!.content as string).startsWith(system)).toBe(true);
        expect(body.some((message) => message.getType() === 'system')).toBe(false);
        assertNoOrphans(body);

        const lastUser = history.findLast((message) => message.getType() === 'human');
        expect(body).toContain(lastUser);

        // Every kept message is the original object (or a shortened copy of a tool output),
        // in the original order.
        let previous = -1;
        for (const message of body) {
          let index = history.indexOf(message);
          if (index === -1) {
            expect(message.getType()).toBe('tool');
            expect(message.content as string).toMatch(/\[truncated: \d+ tokens\]/);
            index = history.findIndex(
              (original) =>
                original.getType() === 'tool' &&
                (original as ToolMessage).tool_call_id === (message as ToolMessage).tool_call_id,
            );
          }
          expect(index).toBeGreaterThan(previous);
          previous = index;
        }
      }),
      { numRuns: 100 },
    );
  });
});
