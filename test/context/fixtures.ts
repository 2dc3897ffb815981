import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';

const WORDS =
  'invoice supplier payment ledger balance account transfer approval pending treasury currency amount wire reference vendor compliance audit quarter budget forecast'.split(
    ' ',
  );

/** Deterministic filler text of roughly `words` words. */
export function filler(words: number, seed: number): string {
  const parts: string[] = [];
  let state = seed * 7919 + 17;
  for (let index = 0; index < words; index++) {
    state = (state * 1103515245 + 12345) % 2147483648;
    parts.push(WORDS[state % WORDS.length]!);
    if (index % 11 === 10) parts.push(String(state % 10_000));
  }
  return parts.join(' ');
}

/**
 * A conversation of `turns` turns: a user question, `toolRounds` AI tool calls each answered
 * by a tool message, and an AI answer. Deterministic.
 */
export function conversation(
  turns: number,
  options: {
    toolRounds?: number;
    callsPerRound?: number;
    toolWords?: number;
    startAt?: number;
  } = {},
): BaseMessage[] {
  const messages: BaseMessage[] = [];
  const rounds = options.toolRounds ?? 1;
  const calls = options.callsPerRound ?? 1;
  const start = options.startAt ?? 0;
  for (let turn = start; turn < start + turns; turn++) {
    messages.push(new HumanMessage(`Turn ${turn}: ${filler(12, turn)}?`));
    for (let round = 0; round < rounds; round++) {
      const ids = Array.from({ length: calls }, (_, call) => `call_${turn}_${round}_${call}`);
      messages.push(
        new AIMessage({
          content: '',
          tool_calls: ids.map((id, call) => ({ id, name: 'lookup', args: { turn, round, call } })),
        }),
      );
      for (const id of ids) {
        messages.push(
          new ToolMessage({
            content: `{"result": "${filler(options.toolWords ?? 20, turn * 31 + round)}"}`,
            tool_call_id: id,
            name: 'lookup',
          }),
        );
      }
    }
    messages.push(new AIMessage(`Answer ${turn}: ${filler(15, turn + 1000)}.`));
  }
  return messages;
}

/** Throws unless every tool message directly follows (with its siblings) the AI message that called it. */
export function assertNoOrphans(messages: readonly BaseMessage[]): void {
  let open = new Set<string>();
  for (const message of messages) {
    const type = message.getType();
    if (type === 'tool') {
      const id = (message as ToolMessage).tool_call_id;
      if (!open.delete(id)) throw new Error(`orphan tool message ${id}`);
      continue;
    }
    if (open.size > 0) throw new Error(`tool calls without results: ${[...open].join(', ')}`);
    const calls = type === 'ai' ? ((message as AIMessage).tool_calls ?? []) : [];
    open = new Set(calls.map((call) => call.id!));
  }
  if (open.size > 0) throw new Error(`tool calls without results: ${[...open].join(', ')}`);
}
